CREATE TABLE "identities" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"email" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "oidc_codes" (
	"digest" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"amr" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_codes" ADD CONSTRAINT "oidc_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "identities_issuer_subject_uq" ON "identities" USING btree ("issuer","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "identities_user_id_provider_uq" ON "identities" USING btree ("user_id","provider");--> statement-breakpoint
CREATE INDEX "oidc_codes_expires_at_idx" ON "oidc_codes" USING btree ("expires_at");