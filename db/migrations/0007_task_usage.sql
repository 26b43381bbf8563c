ALTER TABLE "tasks" ADD COLUMN "step_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "model_calls" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "input_tokens" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "output_tokens" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Tasks recorded before this migration get their step count from their steps; their model usage was never counted and stays 0.
UPDATE "tasks" SET "step_count" = (SELECT count(*) FROM "task_steps" WHERE "task_steps"."task_id" = "tasks"."id");
