ALTER TABLE "organizations" ADD COLUMN "escalation_signing_secret" text;--> statement-breakpoint
-- Organizations that already have an escalation URL get a secret too, so every delivery is
-- signed from now on; their operators rotate it to learn it. 32 bytes taken from two v4
-- UUIDs (244 random bits; pgcrypto is not needed), in base64url like the service's own
-- `whsec_` secrets.
UPDATE "organizations" SET "escalation_signing_secret" = 'whsec_' || rtrim(translate(encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/', '-_'), '=') WHERE "escalation_url" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "sessions_key_unrevoked_idx" ON "sessions" USING btree ("key_id") WHERE "sessions"."revoked_at" is null;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_escalation_url_signed" CHECK ("organizations"."escalation_url" is null or "organizations"."escalation_signing_secret" is not null);
