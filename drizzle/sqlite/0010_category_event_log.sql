CREATE TABLE `category_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`kind` text NOT NULL,
	`category_id` text NOT NULL,
	`row` text
);
--> statement-breakpoint
CREATE INDEX `category_events_at_idx` ON `category_events` (`at`);--> statement-breakpoint
CREATE TABLE `svc_database` (
	`id` text PRIMARY KEY NOT NULL
);
