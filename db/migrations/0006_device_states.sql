CREATE TABLE "device_states" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"state" jsonb NOT NULL,
	"saved_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_states" ADD CONSTRAINT "device_states_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;