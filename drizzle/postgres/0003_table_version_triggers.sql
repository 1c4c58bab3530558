-- Custom SQL migration file, put your code below! --
-- Caches of users and categories ask these counters; every write to either table bumps its own,
-- in the writing transaction, so any instance's write invalidates every instance's cache.
INSERT INTO "table_versions" ("name", "version") VALUES ('users', 0), ('categories', 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE FUNCTION "bump_table_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "table_versions" SET "version" = "version" + 1 WHERE "name" = TG_ARGV[0];
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "users_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "bump_table_version"('users');
--> statement-breakpoint
CREATE TRIGGER "categories_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "categories" FOR EACH STATEMENT EXECUTE FUNCTION "bump_table_version"('categories');
