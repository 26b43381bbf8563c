ALTER TABLE "escalations" ALTER COLUMN "answer" SET DATA TYPE jsonb USING to_jsonb("answer");--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "output_schema" jsonb;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "confirm_before" text[];--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "escalation_on_timeout" text DEFAULT 'fail' NOT NULL;--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "options" text[];--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "multiple" boolean;--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "fields" text[];--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "on_timeout" text DEFAULT 'fail' NOT NULL;--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "sealed_answer" text;