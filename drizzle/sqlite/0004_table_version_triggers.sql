-- Custom SQL migration file, put your code below! --
-- Caches of users and categories ask these counters; every write to either table bumps its own,
-- in the writing transaction, so any instance's write invalidates every instance's cache.
INSERT INTO `table_versions` (`name`, `version`) VALUES ('users', 0), ('categories', 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE TRIGGER `users_insert_version` AFTER INSERT ON `users` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'users'; END;
--> statement-breakpoint
CREATE TRIGGER `users_update_version` AFTER UPDATE ON `users` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'users'; END;
--> statement-breakpoint
CREATE TRIGGER `users_delete_version` AFTER DELETE ON `users` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'users'; END;
--> statement-breakpoint
CREATE TRIGGER `categories_insert_version` AFTER INSERT ON `categories` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'categories'; END;
--> statement-breakpoint
CREATE TRIGGER `categories_update_version` AFTER UPDATE ON `categories` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'categories'; END;
--> statement-breakpoint
CREATE TRIGGER `categories_delete_version` AFTER DELETE ON `categories` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'categories'; END;
