CREATE TABLE `idempotency_keys` (
	`caller` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer,
	`answer` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`locked_until` text NOT NULL,
	PRIMARY KEY(`caller`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_at_idx` ON `idempotency_keys` (`expires_at`);