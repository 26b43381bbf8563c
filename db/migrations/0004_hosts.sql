CREATE TABLE "hosts" (
	"host_id" text PRIMARY KEY NOT NULL,
	"internal_url" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
