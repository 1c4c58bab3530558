ALTER TABLE "svc_database" ADD COLUMN "epoch" text;--> statement-breakpoint
-- The event log's epoch, which cursors carry, apart from the database's identity, which backups go by: a restore
-- or a copy keeps the one and makes the other anew (docs/realtime.md). Cursors given before this get one RESYNC.
UPDATE "svc_database" SET "epoch" = substr(md5(random()::text || clock_timestamp()::text), 1, 16);
