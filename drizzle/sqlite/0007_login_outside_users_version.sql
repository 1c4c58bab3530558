-- Custom SQL migration file, put your code below! --
-- A login stamps users.last_login_at; that is no change a cache of users must see, so the update
-- trigger now names every other column. A column added to users later must be added here too (the
-- storage conformance suite checks that each field's update bumps the version).
DROP TRIGGER `users_update_version`;
--> statement-breakpoint
CREATE TRIGGER `users_update_version` AFTER UPDATE OF `id`, `username`, `username_key`, `email`, `password_hash`, `token_version`, `created_at`, `updated_at`, `role`, `status` ON `users` BEGIN UPDATE `table_versions` SET `version` = `version` + 1 WHERE `name` = 'users'; END;
