// A backup's search index in a form every SQLite reads (docs/deploy.md "Backups"). The
// live index uses FTS5's contentless_delete (SQLite 3.43): a soft delete or a clear of
// 1,000 mails costs it 10-100 ms, where an index that keeps its words (the form older
// versions can delete from) took 0.3-4.6 s of the server's thread for the same clear.
// But Debian 12's sqlite3 (3.40) cannot search such a database or delete mail from it
// ('unrecognized option: "contentless_delete"'; the delete trigger touches the index).
//
// So a backup carries the words as plain rows instead: each indexed mail's words go back
// into search_pending (the queue a delivery writes, search-queue.ts), the index and its
// triggers are dropped, and triggers that only keep the queue in step take their place.
// Any sqlite3 then reads, searches (LIKE over search_pending.words) and deletes. A server
// that opens such a file makes the index again (restoreSearchIndex) and indexes the
// queue in batches, with the event loop free between them, as after a crash.
import type Database from 'better-sqlite3';

/** The live index and the triggers that keep it and the queue in step with mails (schema v14). */
const LIVE_INDEX = `
  CREATE VIRTUAL TABLE mail_search USING fts5(words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
  CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
    DELETE FROM mail_search WHERE rowid = OLD.id;
    DELETE FROM search_pending WHERE mail_id = OLD.id;
  END;
  CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
    DELETE FROM mail_search WHERE rowid = NEW.id;
    DELETE FROM search_pending WHERE mail_id = NEW.id;
  END;
`;

/** The queue alone in step with mails: what a backup has in place of the index. */
const QUEUE_TRIGGERS = `
  CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
    DELETE FROM search_pending WHERE mail_id = OLD.id;
  END;
  CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
    DELETE FROM search_pending WHERE mail_id = NEW.id;
  END;
`;

const hasIndex = (db: Database.Database) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mail_search'").get() !== undefined;

/**
 * In a copy (never the live file): the index's words as rows of search_pending, without
 * their address's namespace (z<id>z), and no FTS5 table left. Read back with fts5vocab,
 * as schema v11 did (about 4 minutes for 1,000,000 mails). Returns the mails carried.
 */
export function makeSearchPortable(db: Database.Database): number {
  if (!hasIndex(db)) return 0;
  return db.transaction(() => {
    db.exec('CREATE VIRTUAL TABLE temp.search_words USING fts5vocab(main, mail_search, instance)');
    const carried = db
      .prepare(
        'INSERT OR IGNORE INTO search_pending (mail_id, address_id, words) ' +
          "SELECT v.doc, m.address_id, group_concat(substr(v.term, length('z' || m.address_id || 'z') + 1), ' ') " +
          'FROM temp.search_words v JOIN mails m ON m.id = v.doc GROUP BY v.doc',
      )
      .run().changes;
    db.exec('DROP TABLE temp.search_words; DROP TRIGGER mails_unindex; DROP TRIGGER mails_unindex_deleted; DROP TABLE mail_search;');
    db.exec(QUEUE_TRIGGERS);
    return carried;
  })();
}

/** On opening a store: a file restored from a backup gets its index back (empty; the queue fills it). */
export function restoreSearchIndex(db: Database.Database): boolean {
  if (hasIndex(db)) return false;
  db.transaction(() => {
    db.exec('DROP TRIGGER IF EXISTS mails_unindex; DROP TRIGGER IF EXISTS mails_unindex_deleted;');
    db.exec(LIVE_INDEX);
  })();
  return true;
}
