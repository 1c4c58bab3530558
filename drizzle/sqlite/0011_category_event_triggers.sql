-- Custom SQL migration file, put your code below! --
-- Every committed change to a category is logged by the writing statement itself, in commit order (one
-- writer at a time), with the row as written: what a subscription resumes from. The database gets its
-- identity, so that a cursor from another database is told apart.
INSERT INTO `svc_database` (`id`) VALUES (lower(hex(randomblob(8))));
--> statement-breakpoint
CREATE TRIGGER `categories_log_insert` AFTER INSERT ON `categories` BEGIN
  INSERT INTO `category_events` (`at`, `kind`, `category_id`, `row`) VALUES (
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'CREATED', NEW.`id`,
    json_object('id', NEW.`id`, 'name', NEW.`name`, 'description', NEW.`description`, 'color_hex', NEW.`color_hex`,
      'icon', NEW.`icon`, 'created_by', NEW.`created_by`, 'created_at', NEW.`created_at`, 'updated_at', NEW.`updated_at`,
      'version', NEW.`version`));
END;
--> statement-breakpoint
CREATE TRIGGER `categories_log_update` AFTER UPDATE ON `categories` BEGIN
  INSERT INTO `category_events` (`at`, `kind`, `category_id`, `row`) VALUES (
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'UPDATED', NEW.`id`,
    json_object('id', NEW.`id`, 'name', NEW.`name`, 'description', NEW.`description`, 'color_hex', NEW.`color_hex`,
      'icon', NEW.`icon`, 'created_by', NEW.`created_by`, 'created_at', NEW.`created_at`, 'updated_at', NEW.`updated_at`,
      'version', NEW.`version`));
END;
--> statement-breakpoint
CREATE TRIGGER `categories_log_delete` AFTER DELETE ON `categories` BEGIN
  INSERT INTO `category_events` (`at`, `kind`, `category_id`, `row`) VALUES (
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'DELETED', OLD.`id`, NULL);
END;
