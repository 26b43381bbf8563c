ALTER TABLE "escalations" ADD COLUMN "answer_link_hashes" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "answer_link_redeemed_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "escalations" ADD COLUMN "answer_access_hash" text;