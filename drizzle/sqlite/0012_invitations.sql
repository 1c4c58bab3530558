CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`digest` text NOT NULL,
	`email` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`used_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_digest_uq` ON `invitations` (`digest`);--> statement-breakpoint
CREATE INDEX `invitations_expires_at_idx` ON `invitations` (`expires_at`);