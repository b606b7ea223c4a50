// Storing and changing mail in SQLite (store.ts MailStore): each delivery's bodies once
// (in parts, storage/parts.ts), its mails, its words queued for the search index, its
// webhook deliveries and the day's count in one transaction; deliveries that reach the
// store in the same turn of the event loop share one commit (group commit).
import type Database from 'better-sqlite3';
import { DAY_MS, type MailBody, type MailStore, type NewMail } from '../store.js';
import { partsOf } from '../parts.js';
import { BUSY_GIVE_UP_MS, BUSY_RETRY_MS, isBusy, type SqliteWrite } from './sqlite-connection.js';
import { toSummary, type MailRow } from './sqlite-mail-reads.js';
import type { SearchQueue } from './search-queue.js';
import { sqliteWebhookQueue } from './sqlite-webhooks.js';
import { sqliteDomainMailCounter } from './sqlite-domain-stats.js';

/**
 * Stores `bytes` in parts (storage/parts.ts): `first` inserts the row that holds the
 * first part and the count, `rest` each further part; returns the first row's id.
 */
function inParts(bytes: Buffer, first: (parts: number, part: Buffer) => { lastInsertRowid: number | bigint }, rest: (id: number, part: number, bytes: Buffer) => void): number {
  const parts = partsOf(bytes);
  const id = Number(first(parts.length, parts[0]!).lastInsertRowid);
  for (let i = 1; i < parts.length; i++) rest(id, i, parts[i]!);
  return id;
}

export type MailWrites = Pick<MailStore, 'insertMails' | 'deliveriesQueued' | 'softDeleteMail' | 'setSeen' | 'clearMails'> & {
  /** Commits the deliveries waiting for the next turn now (before the connection closes). */
  flush(): void;
};

/** One delivery's rows, in the caller's transaction; returns the mails' ids. */
function deliveryInserter(db: Database.Database, searchQueue: SearchQueue, queued: (n: number) => void): (mails: NewMail[]) => number[] {
  const q = {
    insertMail: db.prepare(
      // Positional parameters: binding by name (and the object built for it) cost 3-5 µs more per mail.
      'INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, raw_parts, body_id, size, created_at, envelope) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)',
    ),
    insertBody: db.prepare('INSERT INTO bodies (refs, parts, data) VALUES (?, ?, ?)'),
    // The admin's mails per day (sqlite-operator.ts), counted in the delivery's transaction.
    countDay: db.prepare('INSERT INTO mail_days (day, shard, mails) VALUES (?, 0, ?) ON CONFLICT (day, shard) DO UPDATE SET mails = mails + excluded.mails'),
    insertBodyPart: db.prepare('INSERT INTO body_parts (body_id, part, data) VALUES (?, ?, ?)'),
    insertAttachment: db.prepare('INSERT INTO body_attachments (body_id, idx, parts, content) VALUES (?, ?, ?, ?)'),
    insertAttachmentPart: db.prepare('INSERT INTO body_attachment_parts (attachment_id, part, data) VALUES (?, ?, ?)'),
  };
  // Each stored mail's webhook deliveries, queued in its own transaction (docs/decisions.md "Webhooks").
  const queueWebhooks = sqliteWebhookQueue(db);
  // The admin's per-domain figures (sqlite-domain-stats.ts), counted with the mails.
  const countDomains = sqliteDomainMailCounter(db);
  const insertBody = (body: MailBody, refs: number): number => {
    const id = inParts(body.raw, (parts, first) => q.insertBody.run(refs, parts, first), (bodyId, i, part) => q.insertBodyPart.run(bodyId, i, part));
    body.attachments.forEach((content, i) =>
      inParts(content, (parts, first) => q.insertAttachment.run(id, i, parts, first), (attachmentId, n, part) => q.insertAttachmentPart.run(attachmentId, n, part)),
    );
    return id;
  };
  // Each distinct body once, referenced by as many mails as share it.
  return (mails) => {
    const refs = new Map<MailBody, number>();
    for (const m of mails) refs.set(m.body, (refs.get(m.body) ?? 0) + 1);
    const bodyIds = new Map<MailBody, number>();
    for (const [body, n] of refs) bodyIds.set(body, insertBody(body, n));
    const days = new Map<number, number>();
    for (const m of mails) {
      const day = Math.floor(m.createdAt / DAY_MS);
      days.set(day, (days.get(day) ?? 0) + 1);
    }
    for (const [day, n] of days) q.countDay.run(day, n);
    countDomains(mails);
    return mails.map((m) => {
      const id = Number(
        q.insertMail.run(m.uuid, m.addressId, m.address, m.source, m.messageId, m.metadata, m.trace, bodyIds.get(m.body)!, m.trace.length + m.body.raw.length, m.createdAt, m.envelope ? JSON.stringify(m.envelope) : null)
          .lastInsertRowid,
      );
      if (m.searchText) searchQueue.add(id, m.addressId, m.searchText);
      queued(queueWebhooks(id, m.addressId, m.createdAt, m.operatorWebhook === true, m.webhooksDueAt ?? m.createdAt));
      return id;
    });
  };
}

export function sqliteMailWrites(db: Database.Database, write: SqliteWrite, durable: () => Promise<void>, searchQueue: SearchQueue): MailWrites {
  let deliveriesQueued = 0;
  const insertDelivery = deliveryInserter(db, searchQueue, (n) => (deliveriesQueued += n));
  const insertMails = db.transaction(insertDelivery);
  const insertGroups = db.transaction((groups: NewMail[][]) => groups.map(insertDelivery));
  const q = {
    setSeen: db.prepare(
      'UPDATE mails SET seen = ? WHERE address_id = ? AND uuid = ? AND deleted_at IS NULL RETURNING id, uuid, source, address, metadata, message_id, created_at, seen, envelope',
    ),
    softDelete: db.prepare('UPDATE mails SET deleted_at = ? WHERE address_id = ? AND uuid = ? AND deleted_at IS NULL'),
    clear: db.prepare('UPDATE mails SET deleted_at = ? WHERE address_id = ? AND deleted_at IS NULL'),
  };

  // Group commit: one WAL append for the turn's deliveries instead of one per message;
  // each caller's promise still settles only after that commit.
  let pending: { mails: NewMail[]; since: number; resolve: (ids: number[]) => void; reject: (err: unknown) => void }[] = [];
  let retryTimer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    let results: (number[] | { error: unknown })[];
    try {
      results = insertGroups(batch.map((b) => b.mails));
    } catch (err) {
      // Another connection holds the write lock: try again shortly, off the event loop,
      // until the oldest delivery has waited BUSY_GIVE_UP_MS; then each alone, and fail.
      if (isBusy(err) && db.open && Date.now() - batch[0]!.since < BUSY_GIVE_UP_MS) {
        pending = batch.concat(pending);
        retryTimer = setTimeout(flush, BUSY_RETRY_MS);
        return;
      }
      // One delivery that cannot be stored must not fail the others: each alone.
      results = batch.map((b) => {
        try {
          return insertMails(b.mails);
        } catch (error) {
          return { error };
        }
      });
    }
    const settle = (syncError?: unknown) =>
      batch.forEach((b, i) => {
        const r = results[i]!;
        if (!Array.isArray(r)) b.reject(r.error);
        else if (syncError !== undefined) b.reject(syncError);
        else b.resolve(r);
      });
    durable().then(() => settle(), (err: unknown) => settle(err ?? new Error('The disk refused to sync the database.')));
  };

  return {
    flush,
    insertMails(mails) {
      return new Promise((resolve, reject) => {
        if (!db.open) return reject(new Error('The database is closed.'));
        if (pending.push({ mails, since: Date.now(), resolve, reject }) === 1 && !retryTimer) setImmediate(flush);
      });
    },
    deliveriesQueued: () => deliveriesQueued,
    async softDeleteMail(addressId, uuid) {
      return write(() => q.softDelete.run(Date.now(), addressId, uuid).changes > 0);
    },
    async setSeen(addressId, uuid, seen) {
      return write(() => {
        const row = q.setSeen.get(seen ? 1 : 0, addressId, uuid) as MailRow | undefined;
        return row && toSummary(row);
      });
    },
    async clearMails(addressId) {
      return write(() => q.clear.run(Date.now(), addressId).changes);
    },
  };
}
