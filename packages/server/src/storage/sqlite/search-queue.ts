// The search index (FTS5, mail_search) is written after the delivery, not in it. A
// delivery's transaction only appends its mail's words to search_pending (one row, a
// plain table); the words go into the index in batches, a short while later, on the
// same connection. FTS5 writes a new segment at every commit that touched the index, so
// indexing each mail in its own delivery's commit cost about 100 µs of the server's
// thread a mail at the ingest bench's load, most of it per commit rather than per word;
// in batches of a few hundred it is a fraction of that (docs/decisions.md "Search").
//
// Nothing is found later than before: a search first indexes whatever is still pending
// (searchMails calls catchUp), so every mail whose 250 was sent is found. The queue is
// in the database, written in the mail's own transaction, so a crash loses nothing: the
// next start indexes what was left. A mail deleted while pending leaves the queue with
// it (the triggers of v14), so it is never indexed.
import type Database from 'better-sqlite3';
import { indexWords } from '../search-words.js';

/** How long after a delivery the index is brought up to date (a search does it at once). */
export const SEARCH_INDEX_DELAY_MS = 100;
/**
 * Mails indexed per transaction: the event loop is held for one batch at a time, and
 * batches follow one another with the loop free between them.
 */
const BATCH = 256;

export interface SearchQueue {
  /**
   * In the delivery's transaction: `text` is what the mail is found by (uniqueness and
   * namespacing are done here, later). The index is brought up to date within
   * SEARCH_INDEX_DELAY_MS (if the transaction rolls back, that run finds nothing to do).
   */
  add(mailId: number, addressId: number, text: string): void;
  /** Indexes everything pending (another connection's too), waiting off the event loop while the database is locked. */
  catchUp(): Promise<void>;
  /** Stops the timer; what is pending stays queued for the next start. */
  close(): void;
}

export interface SearchQueueOptions {
  delayMs?: number;
  /** Runs a write, again after short waits while another connection holds the lock (sqlite-connection.ts unlessBusy). */
  unlessBusy: <T>(write: () => T) => Promise<T>;
}

export function createSearchQueue(db: Database.Database, opts: SearchQueueOptions): SearchQueue {
  const delayMs = opts.delayMs ?? SEARCH_INDEX_DELAY_MS;
  const q = {
    add: db.prepare('INSERT INTO search_pending (mail_id, address_id, words) VALUES (?, ?, ?)'),
    next: db.prepare('SELECT mail_id, address_id, words FROM search_pending ORDER BY mail_id LIMIT ?'),
    index: db.prepare('INSERT INTO mail_search (rowid, words) VALUES (?, ?)'),
    done: db.prepare('DELETE FROM search_pending WHERE mail_id <= ?'),
    any: db.prepare('SELECT 1 FROM search_pending LIMIT 1').pluck(),
  };
  /** One batch, oldest first; true when the queue may hold more. IMMEDIATE: no other writer between the read and the delete. */
  const batch = db.transaction((): boolean => {
    const rows = q.next.all(BATCH) as { mail_id: number; address_id: number; words: string }[];
    for (const r of rows) q.index.run(r.mail_id, indexWords(r.address_id, r.words).join(' '));
    if (rows.length > 0) q.done.run(rows.at(-1)!.mail_id);
    return rows.length === BATCH;
  });
  const indexBatch = (): boolean => batch.immediate();

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = (ms: number) => {
    if (timer || closed) return;
    timer = setTimeout(run, ms);
    timer.unref();
  };
  function run(): void {
    timer = undefined;
    if (closed || !db.open) return;
    let more: boolean;
    try {
      more = indexBatch();
    } catch {
      // Locked by another connection (or the disk refused): the queue keeps it; try again later.
      return schedule(delayMs);
    }
    // The next batch in a later turn, so requests and sessions are served between batches.
    if (more) schedule(0);
  }
  // Left by a crash, or by another connection: indexed soon after the start.
  if (q.any.get() !== undefined) schedule(0);

  return {
    add(mailId, addressId, text) {
      q.add.run(mailId, addressId, text);
      schedule(delayMs);
    },
    async catchUp() {
      while (q.any.get() !== undefined) {
        // More than one batch: the event loop is let go between them, as the timer's batches do.
        await opts.unlessBusy(indexBatch);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
