CREATE TABLE "invitations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"digest" text NOT NULL,
	"email" text,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"used_by" uuid
);
--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_digest_uq" ON "invitations" USING btree ("digest");--> statement-breakpoint
CREATE INDEX "invitations_expires_at_idx" ON "invitations" USING btree ("expires_at");