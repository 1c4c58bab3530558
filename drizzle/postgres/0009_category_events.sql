-- Custom SQL migration file, put your code below! --
-- Realtime: every committed change to a category is announced on the channel svc_category_events by
-- the writing statement itself, with the row as written: a rolled-back write announces nothing, and
-- the write stays one round trip. A row too large for a notification (8000 bytes) goes as its id
-- alone, and the listening side reads it. A bulk load (`svc copy`) sets svc.bulk and announces nothing.
CREATE FUNCTION "announce_category_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text := CASE TG_OP WHEN 'INSERT' THEN 'CREATED' WHEN 'UPDATE' THEN 'UPDATED' ELSE 'DELETED' END;
  id uuid := CASE TG_OP WHEN 'DELETE' THEN OLD."id" ELSE NEW."id" END;
  payload text;
BEGIN
  IF current_setting('svc.bulk', true) = 'on' THEN
    RETURN NULL;
  END IF;
  payload := json_build_object('kind', kind, 'id', id, 'row', CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE row_to_json(NEW) END)::text;
  IF octet_length(payload) > 7900 THEN
    payload := json_build_object('kind', kind, 'id', id, 'large', true)::text;
  END IF;
  PERFORM pg_notify('svc_category_events', payload);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "categories_announce" AFTER INSERT OR UPDATE OR DELETE ON "categories" FOR EACH ROW EXECUTE FUNCTION "announce_category_change"();
