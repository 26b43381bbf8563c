ALTER TABLE "devices" ADD COLUMN "browser_incarnation" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "browser_location" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "browser_incarnation" text;--> statement-breakpoint
ALTER TABLE "hosts" ADD COLUMN "heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL;