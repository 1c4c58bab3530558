ALTER TABLE `svc_database` ADD `epoch` text;--> statement-breakpoint
-- The event log's epoch, which cursors carry, apart from the database's identity, which backups go by: a restore
-- or a copy keeps the one and makes the other anew (docs/backups.md, docs/realtime.md). And a new identity for
-- every SQLite database: those made from the empty database an svc binary carries all had that binary's (#53).
-- Cursors given before this get one RESYNC.
UPDATE `svc_database` SET `id` = lower(hex(randomblob(8))), `epoch` = lower(hex(randomblob(8)));
