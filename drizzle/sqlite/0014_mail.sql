CREATE TABLE `account_tokens` (
	`digest` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`user_id` text NOT NULL,
	`email` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `account_tokens_user_id_kind_idx` ON `account_tokens` (`user_id`,`kind`);--> statement-breakpoint
CREATE INDEX `account_tokens_expires_at_idx` ON `account_tokens` (`expires_at`);--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`recipient` text NOT NULL,
	`user_id` text,
	`subject` text NOT NULL,
	`text_body` text NOT NULL,
	`html_body` text NOT NULL,
	`message_id` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`next_attempt_at` text NOT NULL,
	`locked_until` text,
	`sent_at` text,
	`last_error` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mail_outbox_message_id_uq` ON `mail_outbox` (`message_id`);--> statement-breakpoint
CREATE INDEX `mail_outbox_due_idx` ON `mail_outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `mail_outbox_sent_at_idx` ON `mail_outbox` (`status`,`sent_at`);--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified_at` text;