CREATE TABLE "recordings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"host_id" text NOT NULL,
	"status" text NOT NULL,
	"object_key" text NOT NULL,
	"content_type" text NOT NULL,
	"duration_ms" integer,
	"size_bytes" integer,
	"width" integer,
	"height" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "task_files" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"task_id" uuid NOT NULL,
	"name" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"content_type" text NOT NULL,
	"sha256" text NOT NULL,
	"object_key" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "task_steps" ADD COLUMN "screenshot_key" text;--> statement-breakpoint
CREATE INDEX "recordings_subject_idx" ON "recordings" USING btree ("subject_kind","subject_id","created_at");--> statement-breakpoint
CREATE INDEX "recordings_host_status_idx" ON "recordings" USING btree ("host_id","status");--> statement-breakpoint
CREATE INDEX "recordings_finished_idx" ON "recordings" USING btree ("finished_at");--> statement-breakpoint
CREATE INDEX "task_files_task_idx" ON "task_files" USING btree ("task_id","created_at");--> statement-breakpoint
CREATE INDEX "task_files_created_idx" ON "task_files" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "task_steps_screenshot_created_idx" ON "task_steps" USING btree ("created_at") WHERE "task_steps"."screenshot_key" is not null;