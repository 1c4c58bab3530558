-- Custom SQL migration file, put your code below! --
-- users.email_verified_at is part of a user's representation (email_verified), so setting it is a change
-- a cache of users must see: the update trigger names it too.
DROP TRIGGER "users_update_version" ON "users";
--> statement-breakpoint
CREATE TRIGGER "users_update_version" AFTER UPDATE OF "id", "username", "username_key", "email", "password_hash", "token_version", "created_at", "updated_at", "role", "status", "email_verified_at" ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "bump_table_version"('users');
