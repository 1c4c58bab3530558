-- Custom SQL migration file, put your code below! --
-- A login stamps users.last_login_at; that is no change a cache of users must see, so the update
-- trigger now names every other column. A column added to users later must be added here too (the
-- storage conformance suite checks that each field's update bumps the version).
DROP TRIGGER "users_version" ON "users";
--> statement-breakpoint
CREATE TRIGGER "users_version" AFTER INSERT OR DELETE OR TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "bump_table_version"('users');
--> statement-breakpoint
CREATE TRIGGER "users_update_version" AFTER UPDATE OF "id", "username", "username_key", "email", "password_hash", "token_version", "created_at", "updated_at", "role", "status" ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "bump_table_version"('users');
