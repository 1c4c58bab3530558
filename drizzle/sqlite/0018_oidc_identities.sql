CREATE TABLE `identities` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`email` text,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identities_issuer_subject_uq` ON `identities` (`issuer`,`subject`);--> statement-breakpoint
CREATE UNIQUE INDEX `identities_user_id_provider_uq` ON `identities` (`user_id`,`provider`);--> statement-breakpoint
CREATE TABLE `oidc_codes` (
	`digest` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`amr` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oidc_codes_expires_at_idx` ON `oidc_codes` (`expires_at`);