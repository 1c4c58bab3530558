-- Custom SQL migration file, put your code below! --
-- Every committed change to a category is logged by the writing statement itself, with the row as
-- written, and announced on svc_category_events by its number. The number is taken under a lock held
-- to the commit, so numbers follow commit order across instances: a reader that has seen n has seen
-- every change before n. A bulk load (`svc copy`) sets svc.bulk and logs nothing. The database gets
-- its identity, so that a cursor from another database is told apart.
INSERT INTO "svc_database" ("id") VALUES (substr(md5(random()::text || clock_timestamp()::text), 1, 16));
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "announce_category_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text := CASE TG_OP WHEN 'INSERT' THEN 'CREATED' WHEN 'UPDATE' THEN 'UPDATED' ELSE 'DELETED' END;
  id uuid := CASE TG_OP WHEN 'DELETE' THEN OLD."id" ELSE NEW."id" END;
  number bigint;
BEGIN
  IF current_setting('svc.bulk', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('svc_category_events'));
  number := nextval(pg_get_serial_sequence('category_events', 'seq'));
  INSERT INTO "category_events" ("seq", "at", "kind", "category_id", "row")
    VALUES (number, clock_timestamp(), kind, id, CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE row_to_json(NEW)::text END);
  PERFORM pg_notify('svc_category_events', json_build_object('seq', number)::text);
  RETURN NULL;
END
$$;
