-- Custom SQL migration file, put your code below! --
-- A session's renewal is not announced on svc_state: a refresh moving its last use and extending its
-- expiry, a step-up marking its second factor. What the instances keep of a session (kept-reads.ts: its
-- user and its expiry) stays right without it: a kept expiry that has passed is read again. A transaction
-- that notifies commits one at a time, PostgreSQL holding its notification queue's lock until the commit
-- is flushed, and with every refresh notifying, that capped refreshes on every instance (bench/results.md).
-- Still announced: a session ended (deleted), shortened, or handed to another user.
DROP TRIGGER "sessions_state" ON "sessions";
--> statement-breakpoint
CREATE TRIGGER "sessions_state" AFTER UPDATE ON "sessions" FOR EACH ROW
  WHEN (NEW."expires_at" < OLD."expires_at" OR NEW."user_id" IS DISTINCT FROM OLD."user_id")
  EXECUTE FUNCTION "announce_state_change"();
--> statement-breakpoint
CREATE TRIGGER "sessions_state_ended" AFTER DELETE ON "sessions" FOR EACH ROW EXECUTE FUNCTION "announce_state_change"();
