// SQLite backend: one file, WAL journal, synchronous transactions. A commit has
// returned before insertMails resolves, so SMTP answers 250 only for stored mail;
// with synchronous=FULL (the default) the WAL holding that commit has also been
// synced to disk (off the event loop, wal-sync.ts), so the mail survives a power
// loss, not only a crash of the process.
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DAY_MS, type AddressRecord, type MailBody, type MailEnvelope, type MailRecord, type MailSummary, type NewMail, type PurgeResult, type SessionAddressRecord, type SessionRecord, type Store } from '../store.js';
import { startCheckpointer } from './checkpointer.js';
import { migrate } from './migrate.js';
import { sqliteOperatorStore } from './sqlite-operator.js';
import { sqliteParseOutcomeStore } from './sqlite-parse-outcomes.js';
import { sqlitePasswordStore } from './sqlite-passwords.js';
import { sqliteSandboxStore } from './sqlite-sandboxes.js';
import { sqliteTagStore } from './sqlite-tags.js';
import { sqliteWebhookQueue, sqliteWebhookStore } from './sqlite-webhooks.js';
import { createWalSync } from './wal-sync.js';
import { SEARCH_BUDGET_MS, searchOverBudget, toParsedSearch, type ParsedSearch } from '../search-query.js';
import { createSearchQueue } from './search-queue.js';
import { BUDGET_SPENT, createSearcher } from './search-sql.js';
import { startSearchThread } from './search-thread.js';
import { joinParts, PART_BYTES, partsOf, partsReader } from '../parts.js';

/** Messages and attachments above this size are stored in parts of this size (their own row holds the first; storage/parts.ts). */
export const RAW_PART_BYTES = PART_BYTES;

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

interface MailRow {
  id: number;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  message_id: string;
  created_at: number;
  seen: number;
  envelope: string | null;
  raw?: Buffer;
  raw_parts?: number;
  body_id?: number | null;
  body?: Buffer | null;
  body_parts?: number | null;
  /** The bytes of the body's parts after the first. */
  rest_bytes?: number;
}

/** An attachment's row (getAttachment): its first part, how many parts, and the size of the others. */
interface AttachmentRow {
  metadata: string;
  body_id: number | null;
  attachment_id: number | null;
  parts: number | null;
  content: Buffer | null;
  rest_bytes: number;
}

const toSummary = (r: MailRow): MailSummary => ({
  id: r.id,
  uuid: r.uuid,
  source: r.source,
  address: r.address,
  metadata: r.metadata,
  messageId: r.message_id,
  createdAt: r.created_at,
  seen: r.seen === 1,
  ...(r.envelope ? { envelope: JSON.parse(r.envelope) as MailEnvelope } : {}),
});

const toAddress = (r: { id: number; address: string; created_at: number }): AddressRecord => ({ id: r.id, address: r.address, createdAt: r.created_at });

export interface SqliteOptions {
  /** FULL: every commit is on disk before the store reports it. NORMAL: survives a crash of the process, not of the machine. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long after a delivery its words reach the search index (search-queue.ts); a search never waits for it. */
  searchIndexDelayMs?: number;
  /** How long one search may run before it is stopped (search-query.ts SEARCH_BUDGET_MS). */
  searchBudgetMs?: number;
}


/** How long a statement of the serving connection waits for another connection's lock, holding the event loop. */
const BUSY_BLOCK_MS = 20;
/** How long a write keeps trying, between waits that leave the event loop free, before it fails. */
const BUSY_GIVE_UP_MS = 5000;
const BUSY_RETRY_MS = 20;

const isBusy = (err: unknown) => typeof (err as { code?: unknown })?.code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test((err as { code: string }).code);

/** Runs a write, and again after short waits (the event loop free meanwhile) while the database is locked by another connection. */
async function unlessBusy<T>(write: () => T): Promise<T> {
  const until = Date.now() + BUSY_GIVE_UP_MS;
  for (;;) {
    try {
      return write();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= until) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}

export function openSqliteStore(file: string, options: SqliteOptions = {}): Store {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // https://sqlite.org/pragma.html#pragma_synchronous: in WAL mode FULL syncs the WAL at
  // every commit, on the committing thread. The connection commits with NORMAL and
  // FULL's sync is made by walSync, off the event loop (wal-sync.ts); deliveries
  // that arrive together share one commit (see insertMails), commits made during a
  // sync share the next.
  const full = (options.synchronous ?? 'FULL') === 'FULL' && file !== ':memory:';
  db.pragma('synchronous = NORMAL');
  // better-sqlite3 sets a 16 MiB page cache. A large message's pages pass through it on
  // their way to the WAL, so that much memory was taken by one 10 MB message and kept;
  // 4 MiB holds the indexes' hot pages (docs/benchmarks-journal.md "Memory of one large message").
  db.pragma('cache_size = -4096');
  const walSync = full ? createWalSync(`${file}-wal`) : undefined;
  /** Resolves once every commit made so far is as durable as configured. */
  const durable = (): Promise<void> => walSync?.sync() ?? Promise.resolve();
  /**
   * A write, retried off the event loop while another connection (a tool, a second
   * process) holds the write lock, and its result once its commit is durable.
   */
  const afterSync = async <T>(write: () => T): Promise<T> => {
    const value = await unlessBusy(write);
    await durable();
    return value;
  };
  db.pragma('foreign_keys = ON');
  // Opening waits for another connection's lock as long as it takes to start; serving
  // never holds the event loop that long (see unlessBusy).
  db.pragma(`busy_timeout = ${BUSY_GIVE_UP_MS}`);
  migrate(db);
  db.pragma(`busy_timeout = ${BUSY_BLOCK_MS}`);
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(db, file);

  const q = {
    insertAddress: db.prepare('INSERT INTO addresses (address, created_at, unclaimed) VALUES (?, ?, ?) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at'),
    claimAddress: db.prepare('UPDATE addresses SET unclaimed = 0 WHERE address = ? AND unclaimed = 1 RETURNING id, address, created_at'),
    getAddress: db.prepare('SELECT id, address, created_at FROM addresses WHERE id = ?'),
    findAddress: db.prepare('SELECT id, address, created_at FROM addresses WHERE address = ?'),
    deleteAddress: db.prepare('DELETE FROM addresses WHERE id = ?'),
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
    attachmentParts: db.prepare('SELECT data FROM body_attachment_parts WHERE attachment_id = ? ORDER BY part').pluck(),
    attachmentPart: db.prepare('SELECT data FROM body_attachment_parts WHERE attachment_id = ? AND part = ?').pluck(),
    // Mail stored before v4 keeps its whole message in mails.raw and mail_raw_parts.
    rawParts: db.prepare('SELECT data FROM mail_raw_parts WHERE mail_id = ? ORDER BY part').pluck(),
    bodyParts: db.prepare('SELECT data FROM body_parts WHERE body_id = ? ORDER BY part').pluck(),
    bodyPart: db.prepare('SELECT data FROM body_parts WHERE body_id = ? AND part = ?').pluck(),
    getAttachment: db.prepare(
      'SELECT m.metadata, m.body_id, a.id AS attachment_id, a.parts, a.content, ' +
        // length() of a blob reads its size, not its pages.
        '(SELECT coalesce(sum(length(p.data)), 0) FROM body_attachment_parts p WHERE p.attachment_id = a.id AND a.parts > 1) AS rest_bytes ' +
        'FROM mails m LEFT JOIN body_attachments a ON a.body_id = m.body_id AND a.idx = ? WHERE m.address_id = ? AND m.uuid = ? AND m.deleted_at IS NULL',
    ),
    usage: db.prepare('SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM mails WHERE address_id = ? AND deleted_at IS NULL'),
    listMails: db.prepare(
      'SELECT id, uuid, source, address, metadata, message_id, created_at, seen, envelope FROM mails WHERE address_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?',
    ),
    // Answered from the index alone (it holds address_id and deleted_at).
    countMails: db.prepare('SELECT count(*) AS n FROM mails INDEXED BY mails_by_address WHERE address_id = ? AND deleted_at IS NULL').pluck(),
    getMail: db.prepare(
      'SELECT m.id, m.uuid, m.source, m.address, m.metadata, m.message_id, m.created_at, m.seen, m.envelope, m.raw, m.raw_parts, m.body_id, b.data AS body, b.parts AS body_parts, ' +
        // length() of a blob reads its size, not its pages.
        '(SELECT coalesce(sum(length(p.data)), 0) FROM body_parts p WHERE p.body_id = m.body_id AND b.parts > 1) AS rest_bytes ' +
        'FROM mails m LEFT JOIN bodies b ON b.id = m.body_id WHERE m.address_id = ? AND m.uuid = ? AND m.deleted_at IS NULL',
    ),
    setSeen: db.prepare(
      'UPDATE mails SET seen = ? WHERE address_id = ? AND uuid = ? AND deleted_at IS NULL RETURNING id, uuid, source, address, metadata, message_id, created_at, seen, envelope',
    ),
    softDelete: db.prepare('UPDATE mails SET deleted_at = ? WHERE address_id = ? AND uuid = ? AND deleted_at IS NULL'),
    clear: db.prepare('UPDATE mails SET deleted_at = ? WHERE address_id = ? AND deleted_at IS NULL'),
    createSession: db.prepare('INSERT INTO sessions (id, active_address_id, created_at) VALUES (?, NULL, ?)'),
    getSession: db.prepare('SELECT id, active_address_id, created_at FROM sessions WHERE id = ?'),
    upsertMember: db.prepare(
      'INSERT INTO session_addresses (session_id, address_id, added_at) VALUES (?, ?, ?) ON CONFLICT (session_id, address_id) DO UPDATE SET added_at = excluded.added_at',
    ),
    trimMembers: db.prepare(
      'DELETE FROM session_addresses WHERE session_id = ? AND address_id NOT IN (SELECT address_id FROM session_addresses WHERE session_id = ? ORDER BY added_at DESC, address_id DESC LIMIT ?)',
    ),
    renew: db.prepare('UPDATE sessions SET active_address_id = ?, created_at = ? WHERE id = ?'),
    listMembers: db.prepare(
      'SELECT a.id, a.address, a.created_at FROM session_addresses s JOIN addresses a ON a.id = s.address_id WHERE s.session_id = ? ORDER BY s.added_at ASC, a.id ASC',
    ),
    rotate: db.prepare('UPDATE sessions SET id = ?, active_address_id = ?, created_at = ? WHERE id = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
    // Two statements: with an OR, SQLite cannot use either index and scans every mail.
    // A sandbox's mail is kept for its own retention, and its address as long as it exists.
    purgeOldMails: db.prepare('DELETE FROM mails WHERE created_at < ? AND address_id NOT IN (SELECT address_id FROM sandboxes)'),
    purgeSandboxMails: db.prepare(
      'DELETE FROM mails WHERE id IN (SELECT m.id FROM sandboxes s JOIN mails m ON m.address_id = s.address_id WHERE m.created_at < ? - s.retention_ms)',
    ),
    purgeDeletedMails: db.prepare('DELETE FROM mails WHERE deleted_at IS NOT NULL'),
    purgeAddresses: db.prepare('DELETE FROM addresses WHERE created_at < ? AND id NOT IN (SELECT address_id FROM sandboxes)'),
    purgeSessions: db.prepare('DELETE FROM sessions WHERE created_at < ?'),
    ping: db.prepare('SELECT 1').pluck(),
    // Changes only when another connection commits (https://sqlite.org/pragma.html#pragma_data_version).
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
  };

  // Each stored mail's words, indexed for search after its delivery (search-queue.ts).
  const searchQueue = createSearchQueue(db, { delayMs: options.searchIndexDelayMs, unlessBusy });
  // Searches run on a thread of their own, off the event loop (search-thread.ts); a store
  // in memory has no file another connection could open, so it searches here.
  const searchThread = file === ':memory:' ? undefined : startSearchThread(file, { budgetMs: options.searchBudgetMs });
  const searchHere = searchThread ? undefined : createSearcher(db);
  const searchBudgetMs = options.searchBudgetMs ?? SEARCH_BUDGET_MS;
  const searchInMemory = (addressId: number, search: ParsedSearch, limit: number, offset: number) => {
    try {
      return searchHere!(addressId, search, limit, offset, searchBudgetMs);
    } catch (err) {
      throw err instanceof Error && err.message.includes(BUDGET_SPENT) ? searchOverBudget(searchBudgetMs) : err;
    }
  };
  // Each stored mail's webhook deliveries, queued in its own transaction (docs/decisions.md "Webhooks").
  const queueWebhooks = sqliteWebhookQueue(db);
  let deliveriesQueued = 0;

  const insertBody = (body: MailBody, refs: number): number => {
    const id = inParts(body.raw, (parts, first) => q.insertBody.run(refs, parts, first), (bodyId, i, part) => q.insertBodyPart.run(bodyId, i, part));
    body.attachments.forEach((content, i) =>
      inParts(content, (parts, first) => q.insertAttachment.run(id, i, parts, first), (attachmentId, n, part) => q.insertAttachmentPart.run(attachmentId, n, part)),
    );
    return id;
  };
  // One delivery: each distinct body once, referenced by as many mails as share it.
  const insertDelivery = (mails: NewMail[]): number[] => {
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
    return mails.map((m) => {
      const id = Number(
        q.insertMail.run(m.uuid, m.addressId, m.address, m.source, m.messageId, m.metadata, m.trace, bodyIds.get(m.body)!, m.trace.length + m.body.raw.length, m.createdAt, m.envelope ? JSON.stringify(m.envelope) : null)
          .lastInsertRowid,
      );
      if (m.searchText) searchQueue.add(id, m.addressId, m.searchText);
      deliveriesQueued += queueWebhooks(id, m.addressId, m.createdAt, m.operatorWebhook === true);
      return id;
    });
  };
  const insertMails = db.transaction(insertDelivery);
  const insertGroups = db.transaction((groups: NewMail[][]) => groups.map(insertDelivery));

  // Group commit: deliveries that reach the store in the same turn of the event loop
  // share one transaction (one WAL append instead of one per message); each caller's
  // promise still settles only after that commit.
  let pending: { mails: NewMail[]; since: number; resolve: (ids: number[]) => void; reject: (err: unknown) => void }[] = [];
  let retryTimer: NodeJS.Timeout | undefined;
  const flushPending = () => {
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
        retryTimer = setTimeout(flushPending, BUSY_RETRY_MS);
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
  const addMember = db.transaction((sessionId: string, addressId: number, addedAt: number, max: number) => {
    q.upsertMember.run(sessionId, addressId, addedAt);
    q.trimMembers.run(sessionId, sessionId, max);
    q.renew.run(addressId, addedAt, sessionId);
  });
  const purge = db.transaction((c: { mailBefore: number; addressBefore: number; sessionBefore: number; now?: number }): PurgeResult => {
    // Addresses first: their mail goes with them through ON DELETE CASCADE.
    const addresses = q.purgeAddresses.run(c.addressBefore).changes;
    const mails =
      q.purgeOldMails.run(c.mailBefore).changes + (c.now === undefined ? 0 : q.purgeSandboxMails.run(c.now).changes) + q.purgeDeletedMails.run().changes;
    const sessions = q.purgeSessions.run(c.sessionBefore).changes;
    return { mails, addresses, sessions };
  });

  // PRAGMA data_version takes the WAL read lock (system calls), so it is not free.
  let mark: number | undefined;
  const forgetMark = () => {
    mark = undefined;
  };

  return {
    kind: 'sqlite',
    ...sqliteOperatorStore(db, afterSync),
    ...sqlitePasswordStore(db, afterSync),
    ...sqliteSandboxStore(db, afterSync),
    ...sqliteTagStore(db, afterSync),
    ...sqliteParseOutcomeStore(db, afterSync, { columns: 'm.id, m.uuid, m.source, m.address, m.metadata, m.message_id, m.created_at, m.seen, m.envelope', of: toSummary }),
    ...sqliteWebhookStore(db, afterSync),
    async createAddress(address, createdAt, opts = {}) {
      return afterSync(() => {
        const row = q.insertAddress.get(address, createdAt, opts.unclaimed ? 1 : 0) as { id: number; address: string; created_at: number } | undefined;
        return row && toAddress(row);
      });
    },
    async claimAddress(address) {
      return afterSync(() => {
        const row = q.claimAddress.get(address) as { id: number; address: string; created_at: number } | undefined;
        return row && toAddress(row);
      });
    },
    async getAddress(id) {
      const row = q.getAddress.get(id) as { id: number; address: string; created_at: number } | undefined;
      return row && toAddress(row);
    },
    async findAddress(address) {
      const row = q.findAddress.get(address) as { id: number; address: string; created_at: number } | undefined;
      return row && toAddress(row);
    },
    async deleteAddress(id) {
      return afterSync(() => q.deleteAddress.run(id).changes > 0);
    },
    insertMails(mails) {
      return new Promise((resolve, reject) => {
        if (!db.open) return reject(new Error('The database is closed.'));
        if (pending.push({ mails, since: Date.now(), resolve, reject }) === 1 && !retryTimer) setImmediate(flushPending);
      });
    },
    async listMails(addressId, limit, offset) {
      const rows = q.listMails.all(addressId, limit, offset) as MailRow[];
      // The count is only needed past a short first page.
      const count = offset === 0 && rows.length < limit ? rows.length : (q.countMails.get(addressId) as number);
      return { results: rows.map(toSummary), count };
    },
    async searchMails(addressId, query, limit, offset) {
      const search = toParsedSearch(query);
      if (search.terms.length === 0) return { results: [], count: 0 };
      // Mail delivered since the last batch is indexed first, so a search finds every mail stored.
      await searchQueue.catchUp();
      const page = searchThread ? await searchThread.search(addressId, search, limit, offset) : searchInMemory(addressId, search, limit, offset);
      return { results: page.rows.map(toSummary), count: page.count };
    },
    async getMail(addressId, uuid) {
      const row = q.getMail.get(addressId, uuid) as MailRow | undefined;
      if (!row) return undefined;
      // Read a part at a time into the whole (storage/parts.ts), not all parts and then their join.
      const raw =
        row.body_id != null
          ? joinParts([row.raw!, row.body!], row.rest_bytes!, row.body_parts! > 1 ? (q.bodyParts.iterate(row.body_id) as Iterable<Buffer>) : [])
          : row.raw_parts! > 1
            ? Buffer.concat([row.raw!, ...(q.rawParts.all(row.id) as Buffer[])])
            : row.raw!;
      return raw && { ...toSummary(row), raw };
    },
    async openMail(addressId, uuid) {
      const row = q.getMail.get(addressId, uuid) as MailRow | undefined;
      if (!row) return undefined;
      if (row.body_id == null) {
        // Mail stored before v4 (no body): read whole, as getMail reads it.
        const raw = row.raw_parts! > 1 ? Buffer.concat([row.raw!, ...(q.rawParts.all(row.id) as Buffer[])]) : row.raw!;
        return { ...toSummary(row), bytes: raw.length, pieces: partsReader([raw], raw.length, 1, () => undefined) };
      }
      const bodyId = row.body_id;
      const bytes = row.raw!.length + row.body!.length + row.rest_bytes!;
      return { ...toSummary(row), bytes, pieces: partsReader([row.raw!, row.body!], bytes, row.body_parts!, (part) => q.bodyPart.get(bodyId, part) as Buffer | undefined) };
    },
    async openAttachment(addressId, uuid, index) {
      const row = q.getAttachment.get(index, addressId, uuid) as AttachmentRow | undefined;
      if (!row) return undefined;
      const { content, attachment_id: id } = row;
      const bytes = content && content.length + row.rest_bytes;
      const pieces = content ? partsReader([content], bytes!, row.parts!, (part) => q.attachmentPart.get(id, part) as Buffer | undefined) : partsReader([], 0, 1, () => undefined);
      return { metadata: row.metadata, legacy: row.body_id === null, bytes, pieces };
    },
    async getAttachment(addressId, uuid, index) {
      const row = q.getAttachment.get(index, addressId, uuid) as AttachmentRow | undefined;
      if (!row) return undefined;
      const content = row.content && row.parts! > 1 ? (joinParts([row.content], row.rest_bytes, q.attachmentParts.iterate(row.attachment_id) as Iterable<Buffer>) ?? null) : row.content;
      return { metadata: row.metadata, content, legacy: row.body_id === null };
    },
    async addressUsage(addressId) {
      return q.usage.get(addressId) as { count: number; bytes: number };
    },
    async softDeleteMail(addressId, uuid) {
      return afterSync(() => q.softDelete.run(Date.now(), addressId, uuid).changes > 0);
    },
    async setSeen(addressId, uuid, seen) {
      return afterSync(() => {
        const row = q.setSeen.get(seen ? 1 : 0, addressId, uuid) as MailRow | undefined;
        return row && toSummary(row);
      });
    },
    async clearMails(addressId) {
      return afterSync(() => q.clear.run(Date.now(), addressId).changes);
    },
    async createSession(id, createdAt) {
      await afterSync(() => q.createSession.run(id, createdAt));
    },
    async getSession(id) {
      const row = q.getSession.get(id) as { id: string; active_address_id: number | null; created_at: number } | undefined;
      return row && { id: row.id, activeAddressId: row.active_address_id, createdAt: row.created_at };
    },
    async addSessionAddress(sessionId, addressId, addedAt, max) {
      await afterSync(() => addMember(sessionId, addressId, addedAt, max));
    },
    async listSessionAddresses(sessionId) {
      const rows = q.listMembers.all(sessionId) as { id: number; address: string; created_at: number }[];
      return rows.map((r): SessionAddressRecord => ({ addressId: r.id, address: r.address, createdAt: r.created_at }));
    },
    async rotateSession(oldId, newId, activeAddressId, renewedAt) {
      return afterSync(() => q.rotate.run(newId, activeAddressId, renewedAt, oldId).changes > 0);
    },
    async deleteSession(id) {
      return afterSync(() => q.deleteSession.run(id).changes > 0);
    },
    async purge(cutoffs) {
      return afterSync(() => purge(cutoffs));
    },
    deliveriesQueued: () => deliveriesQueued,
    externalWriteMark() {
      // Read once per turn of the event loop and shared by the requests handled in it:
      // each such request arrived before the turn began, so before the read.
      if (mark === undefined) {
        mark = q.dataVersion.get() as number;
        setImmediate(forgetMark);
      }
      return mark;
    },
    async ping() {
      q.ping.get();
    },
    async close() {
      if (!db.open) return;
      flushPending();
      searchQueue.close();
      await searchThread?.close();
      await walSync?.close();
      await checkpointer?.close();
      db.close();
    },
  };
}

export type { SessionRecord, MailRecord };
