CREATE TABLE "cdp_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"space_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"key_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"connected_at" timestamp (3) with time zone,
	"connection_host_id" text,
	"heartbeat_at" timestamp (3) with time zone,
	"closed_at" timestamp (3) with time zone,
	"close_reason" text
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "cdp_session_id" uuid;--> statement-breakpoint
CREATE INDEX "cdp_sessions_org_created_idx" ON "cdp_sessions" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "cdp_sessions_open_idx" ON "cdp_sessions" USING btree ("connection_host_id") WHERE "cdp_sessions"."connected_at" is not null and "cdp_sessions"."closed_at" is null;