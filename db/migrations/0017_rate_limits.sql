-- IF NOT EXISTS: on a database where OPERATOR_RATE_LIMIT_STORE=postgres ran before this
-- migration, rate-limiter-flexible made the table itself, in this same layout.
CREATE TABLE IF NOT EXISTS "rate_limits" (
	"key" varchar(255) PRIMARY KEY NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"expire" bigint
);
