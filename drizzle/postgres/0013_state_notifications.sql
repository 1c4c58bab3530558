-- Custom SQL migration file, put your code below! --
-- Each instance keeps every token's standing and the table versions in memory (kept-reads.ts) and
-- learns here of each change to them, whichever instance or command made it: a table version bumped,
-- a session changed or ended (a user's deletion ends theirs by the cascade), a token revoked. A
-- truncation says that nothing kept holds. Sent at commit, in commit order; a rolled-back change sends
-- nothing.
CREATE FUNCTION "announce_state_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('svc_state', 'reset');
  ELSIF TG_TABLE_NAME = 'table_versions' THEN
    PERFORM pg_notify('svc_state', 'v ' || NEW."name" || ' ' || NEW."version");
  ELSIF TG_TABLE_NAME = 'sessions' THEN
    PERFORM pg_notify('svc_state', 's ' || OLD."id");
  ELSE
    PERFORM pg_notify('svc_state', 'j ' || NEW."jti");
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "table_versions_state" AFTER UPDATE ON "table_versions" FOR EACH ROW EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "table_versions_state_reset" AFTER TRUNCATE ON "table_versions" FOR EACH STATEMENT EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "sessions_state" AFTER UPDATE OR DELETE ON "sessions" FOR EACH ROW EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "sessions_state_reset" AFTER TRUNCATE ON "sessions" FOR EACH STATEMENT EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "revoked_tokens_state" AFTER INSERT ON "revoked_tokens" FOR EACH ROW EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "revoked_tokens_state_reset" AFTER TRUNCATE ON "revoked_tokens" FOR EACH STATEMENT EXECUTE FUNCTION "announce_state_change"();
