CREATE TABLE "task_caches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"space_id" uuid NOT NULL,
	"key" text NOT NULL,
	"prompt" text NOT NULL,
	"steps" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"hits" integer DEFAULT 0 NOT NULL,
	"heals" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "task_steps" ADD COLUMN "replayed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "task_steps" ADD COLUMN "cache" jsonb;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "cache_key" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "cache_outcome" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "replayed_steps" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "task_caches_space_key" ON "task_caches" USING btree ("space_id","key");--> statement-breakpoint
CREATE INDEX "task_caches_page_idx" ON "task_caches" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);