-- A delivery queues its mail's words here and the index (mail_search) is written
-- in batches afterwards (search-queue.ts, docs/decisions.md "Search"). A mail deleted
-- or soft-deleted while queued leaves the queue too, so it is never indexed.
CREATE TABLE search_pending (
  mail_id INTEGER PRIMARY KEY,
  address_id INTEGER NOT NULL,
  words TEXT NOT NULL
);
DROP TRIGGER mails_unindex;
DROP TRIGGER mails_unindex_deleted;
CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
  DELETE FROM mail_search WHERE rowid = OLD.id;
  DELETE FROM search_pending WHERE mail_id = OLD.id;
END;
CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
  DELETE FROM mail_search WHERE rowid = NEW.id;
  DELETE FROM search_pending WHERE mail_id = NEW.id;
END;
