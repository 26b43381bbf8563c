CREATE TABLE "escalations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"space_id" uuid NOT NULL,
	"task_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"kind" text NOT NULL,
	"subject_kind" text NOT NULL,
	"urgency" text NOT NULL,
	"reason" text NOT NULL,
	"status" text NOT NULL,
	"answer" text,
	"cleared" boolean,
	"resolved_by" text,
	"resolved_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"token_hashes" text[] NOT NULL,
	"delivery_status" text NOT NULL,
	"delivery_attempts" integer DEFAULT 0 NOT NULL,
	"next_delivery_at" timestamp (3) with time zone,
	"delivery_lease_owner" text,
	"delivery_last_error" text
);
--> statement-breakpoint
CREATE INDEX "escalations_page_idx" ON "escalations" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "escalations_task_idx" ON "escalations" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "escalations_pending_expiry_idx" ON "escalations" USING btree ("expires_at") WHERE "escalations"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "escalations_delivery_due_idx" ON "escalations" USING btree ("next_delivery_at") WHERE "escalations"."delivery_status" = 'pending';