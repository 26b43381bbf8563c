CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"space_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"mode" text NOT NULL,
	"token_hash" text NOT NULL,
	"key_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"hold_task_id" uuid,
	"hold_expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "sessions_org_created_idx" ON "sessions" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_one_hold_per_device" ON "sessions" USING btree ("device_id") WHERE "sessions"."hold_task_id" is not null;--> statement-breakpoint
CREATE INDEX "sessions_hold_expiry_idx" ON "sessions" USING btree ("hold_expires_at") WHERE "sessions"."hold_task_id" is not null;