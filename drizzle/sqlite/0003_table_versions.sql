CREATE TABLE `table_versions` (
	`name` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
