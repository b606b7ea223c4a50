// PostgreSQL backend for multi-node deployments. Same semantics as the SQLite
// backend: every multi-statement operation is one transaction on one pooled
// client, and insertMails resolves only after COMMIT, so SMTP answers 250 only
// for stored mail. BIGINT columns (ids, ms timestamps, counts) arrive from pg as
// strings and are converted to numbers here.
import pg from 'pg';
import { DAY_MS, type AddressRecord, type MailBody, type MailEnvelope, type MailSummary, type PurgeResult, type SessionAddressRecord, type Store } from '../store.js';
import { migrate, quoteIdent } from './migrate.js';
import { MAIL_DAY_SHARDS, postgresOperatorStore } from './postgres-operator.js';
import { postgresParseOutcomeStore } from './postgres-parse-outcomes.js';
import { postgresPasswordStore } from './postgres-passwords.js';
import { postgresSandboxStore } from './postgres-sandboxes.js';
import { postgresTagStore } from './postgres-tags.js';
import { postgresWebhookStore, queueWebhooks } from './postgres-webhooks.js';
import { indexWords } from '../search-words.js';
import { SEARCH_BUDGET_MS, searchOverBudget, toParsedSearch } from '../search-query.js';
import { pgSearchPlan } from './postgres-search.js';
import { partsJoiner, partsOf, partsReader } from '../parts.js';
import { countGarbage, endOfMessage } from '../../memory/young-garbage.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

interface AddressRow {
  id: string;
  address: string;
  created_at: string;
}

interface MailRow {
  id: string;
  uuid: string;
  source: string;
  address: string;
  metadata: string;
  message_id: string;
  created_at: string;
  seen: boolean;
  envelope: string | null;
  raw?: Buffer;
  body_id?: string | null;
  body?: Buffer | null;
  body_parts?: number | null;
  /** The bytes of the body's parts after the first (a bigint, as a string). */
  rest_bytes?: string;
}

const toAddress = (r: AddressRow): AddressRecord => ({ id: Number(r.id), address: r.address, createdAt: Number(r.created_at) });

const toSummary = (r: MailRow): MailSummary => ({
  id: Number(r.id),
  uuid: r.uuid,
  source: r.source,
  address: r.address,
  metadata: r.metadata,
  messageId: r.message_id,
  createdAt: Number(r.created_at),
  seen: r.seen,
  ...(r.envelope ? { envelope: JSON.parse(r.envelope) as MailEnvelope } : {}),
});

// First key of the two-key advisory lock that orders one address's deliveries ("ti" + "ml").
const MAIL_ORDER_LOCK = 0x74696d6c;

/** A mail's search lexemes (array_to_tsvector refuses an empty array: none instead). */
const lexemes = (addressId: number, text: string): string[] | null => {
  const words = indexWords(addressId, text);
  return words.length ? words : null;
};
const MAIL_COLUMNS = 'id, uuid, source, address, metadata, message_id, created_at, seen, envelope';

export interface PostgresOptions {
  schema?: string;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** Called when an idle pooled connection fails (the pool replaces it). */
  onIdleError?: (err: Error) => void;
  /** How long one search may run before PostgreSQL cancels it (search-query.ts SEARCH_BUDGET_MS). */
  searchBudgetMs?: number;
}

export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<Store> {
  const { schema } = options;
  const searchBudgetMs = Math.max(1, Math.floor(options.searchBudgetMs ?? SEARCH_BUDGET_MS));
  const setPath = schema === undefined ? undefined : `SET search_path TO ${quoteIdent(schema)}`;
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    application_name: options.applicationName ?? 'temp-inbox',
    // Awaited by the pool before a new connection is handed out; when it fails
    // the connection is closed and the checkout fails, so no query can ever run
    // against the wrong schema.
    onConnect: setPath === undefined ? undefined : async (client) => void (await client.query(setPath)),
  });
  // An idle client losing its connection must not crash the process; the pool
  // drops it and the next checkout opens a fresh one. The caller logs it.
  pool.on('error', (err) => options.onIdleError?.(err));

  async function transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A client whose rollback fails is in an unknown state: destroy it.
      await client.query('ROLLBACK').catch((rollbackErr: Error) => {
        broken = rollbackErr;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  try {
    await migrate(pool, schema);
  } catch (err) {
    await pool.end();
    throw err;
  }

  const q = <R extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[] = []) => db.query<R>(text, values);
  /**
   * A body or an attachment whole, `bytes` long: `head` (what its row holds) and then its
   * further parts (storage/parts.ts), a query a part, each copied into the whole as it
   * comes; undefined when a part is missing (the mail was deleted meanwhile: gone, not
   * cut short). Each part arrives as hex, twice its size, in socket reads that
   * node-postgres copies into one buffer and then decodes from a string of the same
   * size: about four times the part left behind, counted (memory/young-garbage.ts) with
   * the part itself, so reading a large message holds little more than the message.
   */
  const whole = async (head: Buffer[], bytes: number, parts: number, text: string, values: unknown[]): Promise<Buffer | undefined> => {
    const joined = partsJoiner(head.reduce((n, piece) => n + piece.length, 0) + bytes);
    for (const piece of head) joined.add(piece);
    for (let part = 1; part < parts; part++) {
      const data = (await q<{ data: Buffer }>(pool, text, [...values, part])).rows[0]?.data;
      if (!data || !joined.add(data)) return undefined;
      countGarbage(4 * data.length);
    }
    return joined.done();
  };
  /** A live mail's row with its head pieces (raw, the body's first part) and the size of the body's further parts. */
  const mailRow = async (addressId: number, uuid: string): Promise<MailRow | undefined> =>
    (
      await q<MailRow>(
        pool,
        `SELECT ${MAIL_COLUMNS.split(', ').map((c) => `m.${c}`).join(', ')}, m.raw, m.body_id, b.data AS body, b.parts AS body_parts, ` +
          // octet_length of a stored value reads its size, not its data.
          '(SELECT coalesce(sum(octet_length(p.data)), 0) FROM body_parts p WHERE p.body_id = m.body_id AND b.parts > 1) AS rest_bytes ' +
          'FROM mails m LEFT JOIN bodies b ON b.id = m.body_id ' +
          'WHERE m.address_id = $1 AND m.uuid = $2 AND m.deleted_at IS NULL',
        [addressId, uuid],
      )
    ).rows[0];
  /** A live mail's attachment row: its first part, how many parts, and the size of the others. */
  const attachmentRow = async (addressId: number, uuid: string, index: number) =>
    (
      await q<{ metadata: string; body_id: string | null; parts: number | null; content: Buffer | null; rest_bytes: string }>(
        pool,
        'SELECT m.metadata, m.body_id, a.parts, a.content, ' +
          '(SELECT coalesce(sum(octet_length(p.data)), 0) FROM body_attachment_parts p WHERE p.body_id = m.body_id AND p.idx = $1 AND a.parts > 1) AS rest_bytes ' +
          'FROM mails m LEFT JOIN body_attachments a ON a.body_id = m.body_id AND a.idx = $1 ' +
          'WHERE m.address_id = $2 AND m.uuid = $3 AND m.deleted_at IS NULL',
        [index, addressId, uuid],
      )
    ).rows[0];
  let closed = false;
  let deliveriesQueued = 0;

  return {
    kind: 'postgres',
    ...postgresOperatorStore(pool),
    ...postgresPasswordStore(pool),
    ...postgresSandboxStore(pool, transaction),
    ...postgresTagStore(pool, transaction),
    ...postgresParseOutcomeStore(pool, { columns: MAIL_COLUMNS.split(', ').map((c) => `m.${c}`).join(', '), of: toSummary }),
    ...postgresWebhookStore(pool),
    async createAddress(address, createdAt, opts = {}) {
      const { rows } = await q<AddressRow>(
        pool,
        'INSERT INTO addresses (address, created_at, unclaimed) VALUES ($1, $2, $3) ON CONFLICT (address) DO NOTHING RETURNING id, address, created_at',
        [address, createdAt, opts.unclaimed === true],
      );
      return rows[0] && toAddress(rows[0]);
    },
    async claimAddress(address) {
      const { rows } = await q<AddressRow>(pool, 'UPDATE addresses SET unclaimed = false WHERE address = $1 AND unclaimed RETURNING id, address, created_at', [address]);
      return rows[0] && toAddress(rows[0]);
    },
    async getAddress(id) {
      const { rows } = await q<AddressRow>(pool, 'SELECT id, address, created_at FROM addresses WHERE id = $1', [id]);
      return rows[0] && toAddress(rows[0]);
    },
    async findAddress(address) {
      const { rows } = await q<AddressRow>(pool, 'SELECT id, address, created_at FROM addresses WHERE address = $1', [address]);
      return rows[0] && toAddress(rows[0]);
    },
    async deleteAddress(id) {
      const { rowCount } = await q(pool, 'DELETE FROM addresses WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    },
    async insertMails(mails) {
      if (mails.length === 0) return [];
      return transaction(async (client) => {
        // Mail ids are drawn from one sequence at INSERT, not at COMMIT, so two
        // deliveries to one address (on one node or two) could commit out of id order,
        // and a client asking for mail newer than the largest id it has seen
        // (GET /api/mails/wait?since=, Last-Event-ID) would miss the one that committed
        // a moment later. A transaction-scoped lock per address serialises deliveries
        // to the same address; taken in address order, so that two deliveries to
        // several addresses cannot deadlock.
        const addressIds = [...new Set(mails.map((m) => m.addressId))].sort((a, b) => a - b);
        for (const id of addressIds) await q(client, 'SELECT pg_advisory_xact_lock($1, $2)', [MAIL_ORDER_LOCK, id % 2147483647]);
        // Each distinct body once, referenced by as many mails as share it.
        const refs = new Map<MailBody, number>();
        for (const m of mails) refs.set(m.body, (refs.get(m.body) ?? 0) + 1);
        const bodyIds = new Map<MailBody, string>();
        // node-postgres copies each part twice on its way out (into its parameters'
        // buffer, then into the query's message): garbage that V8 would hold, a few
        // times the message's size, until something else made it collect.
        const bound = async (text: string, values: unknown[], part: Buffer) => {
          const result = await q<{ id: string }>(client, text, values);
          countGarbage(2 * part.length);
          return result;
        };
        for (const [body, n] of refs) {
          // A part at a time (storage/parts.ts): the first in the row itself, the rest beside it.
          const raw = partsOf(body.raw);
          const { rows } = await bound('INSERT INTO bodies (refs, parts, data) VALUES ($1, $2, $3) RETURNING id', [n, raw.length, raw[0]], raw[0]!);
          const bodyId = rows[0]!.id;
          bodyIds.set(body, bodyId);
          for (let p = 1; p < raw.length; p++) await bound('INSERT INTO body_parts (body_id, part, data) VALUES ($1, $2, $3)', [bodyId, p, raw[p]], raw[p]!);
          for (let i = 0; i < body.attachments.length; i++) {
            const parts = partsOf(body.attachments[i]!);
            await bound('INSERT INTO body_attachments (body_id, idx, parts, content) VALUES ($1, $2, $3, $4)', [bodyId, i, parts.length, parts[0]], parts[0]!);
            for (let p = 1; p < parts.length; p++) {
              await bound('INSERT INTO body_attachment_parts (body_id, idx, part, data) VALUES ($1, $2, $3, $4)', [bodyId, i, p, parts[p]], parts[p]!);
            }
          }
        }
        endOfMessage();
        const ids: number[] = [];
        for (const m of mails) {
          const { rows } = await q<{ id: string }>(
            client,
            'INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, body_id, size, created_at, search, envelope) ' +
              // The words as they are (array_to_tsvector: no parser, no dictionary), each in its address's namespace.
              'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $11::text[] IS NULL THEN NULL ELSE array_to_tsvector($11::text[]) END, $12) RETURNING id',
            [
              m.uuid,
              m.addressId,
              m.address,
              m.source,
              m.messageId,
              m.metadata,
              m.trace,
              bodyIds.get(m.body),
              m.trace.length + m.body.raw.length,
              m.createdAt,
              m.searchText ? lexemes(m.addressId, m.searchText) : null,
              m.envelope ? JSON.stringify(m.envelope) : null,
            ],
          );
          ids.push(Number(rows[0]!.id));
        }
        // The mails' webhook deliveries, committed with them (docs/decisions.md "Webhooks").
        deliveriesQueued += await queueWebhooks(
          client,
          ids,
          ids.filter((_, i) => mails[i]!.operatorWebhook === true),
        );
        // The admin's mails per day, last: the row stays locked only until the commit.
        const days = new Map<number, number>();
        for (const m of mails) {
          const day = Math.floor(m.createdAt / DAY_MS);
          days.set(day, (days.get(day) ?? 0) + 1);
        }
        for (const [day, n] of [...days].sort((x, y) => x[0] - y[0])) {
          await q(client, 'INSERT INTO mail_days (day, shard, mails) VALUES ($1, $2, $3) ON CONFLICT (day, shard) DO UPDATE SET mails = mail_days.mails + excluded.mails', [
            day,
            addressIds[0]! % MAIL_DAY_SHARDS,
            n,
          ]);
        }
        return ids;
      });
    },
    async searchMails(addressId, query, limit, offset) {
      const plan = pgSearchPlan(addressId, toParsedSearch(query));
      if (!plan) return { results: [], count: 0 };
      const n = plan.params.length;
      try {
        return await transaction(async (client) => {
          // The search's own bound: past it PostgreSQL cancels the statement (57014).
          await client.query(`SET LOCAL statement_timeout = ${searchBudgetMs}`);
          const { rows } = await q<MailRow>(
            client,
            `SELECT ${MAIL_COLUMNS.split(', ').map((c) => `m.${c}`).join(', ')} FROM mails m WHERE ${plan.where} ORDER BY m.created_at DESC, m.id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
            [...plan.params, limit, offset],
          );
          let count = rows.length;
          if (!(offset === 0 && rows.length < limit)) count = Number((await q<{ n: string }>(client, `SELECT count(*) AS n FROM mails m WHERE ${plan.where}`, plan.params)).rows[0]!.n);
          return { results: rows.map(toSummary), count };
        });
      } catch (err) {
        if ((err as { code?: unknown }).code === '57014') throw searchOverBudget(searchBudgetMs);
        throw err;
      }
    },
    async listMails(addressId, limit, offset) {
      const { rows } = await q<MailRow>(
        pool,
        `SELECT ${MAIL_COLUMNS} FROM mails WHERE address_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [addressId, limit, offset],
      );
      // The count is only needed past a short first page.
      let count = rows.length;
      if (!(offset === 0 && rows.length < limit)) {
        const res = await q<{ n: string }>(pool, 'SELECT count(*) AS n FROM mails WHERE address_id = $1 AND deleted_at IS NULL', [addressId]);
        count = Number(res.rows[0]!.n);
      }
      return { results: rows.map(toSummary), count };
    },
    async getMail(addressId, uuid) {
      const row = await mailRow(addressId, uuid);
      if (!row) return undefined;
      // Mail stored before the v2 schema holds its whole message in raw and no body.
      if (!row.body) return { ...toSummary(row), raw: row.raw! };
      const raw = await whole([row.raw!, row.body], Number(row.rest_bytes), row.body_parts!, 'SELECT data FROM body_parts WHERE body_id = $1 AND part = $2', [row.body_id!]);
      return raw && { ...toSummary(row), raw };
    },
    async openMail(addressId, uuid) {
      const row = await mailRow(addressId, uuid);
      if (!row) return undefined;
      if (!row.body) return { ...toSummary(row), bytes: row.raw!.length, pieces: partsReader([row.raw!], row.raw!.length, 1, () => undefined) };
      const bodyId = row.body_id!;
      const bytes = row.raw!.length + row.body.length + Number(row.rest_bytes);
      const readPart = async (part: number) => {
        const data = (await q<{ data: Buffer }>(pool, 'SELECT data FROM body_parts WHERE body_id = $1 AND part = $2', [bodyId, part])).rows[0]?.data;
        // Read as hex, about four times the part is left behind (see whole above).
        if (data) countGarbage(4 * data.length);
        return data;
      };
      return { ...toSummary(row), bytes, pieces: partsReader([row.raw!, row.body], bytes, row.body_parts!, readPart) };
    },
    async openAttachment(addressId, uuid, index) {
      const row = await attachmentRow(addressId, uuid, index);
      if (!row) return undefined;
      const { content, body_id: bodyId } = row;
      const bytes = content && content.length + Number(row.rest_bytes);
      const readPart = async (part: number) => {
        const data = (await q<{ data: Buffer }>(pool, 'SELECT data FROM body_attachment_parts WHERE body_id = $1 AND idx = $2 AND part = $3', [bodyId, index, part])).rows[0]?.data;
        if (data) countGarbage(4 * data.length);
        return data;
      };
      const pieces = content ? partsReader([content], bytes!, row.parts!, readPart) : partsReader([], 0, 1, () => undefined);
      return { metadata: row.metadata, legacy: bodyId === null, bytes, pieces };
    },
    async getAttachment(addressId, uuid, index) {
      const row = await attachmentRow(addressId, uuid, index);
      if (!row) return undefined;
      const content = row.content && (await whole([row.content], Number(row.rest_bytes), row.parts!, 'SELECT data FROM body_attachment_parts WHERE body_id = $1 AND idx = $2 AND part = $3', [row.body_id!, index]));
      if (content === undefined) return undefined;
      return { metadata: row.metadata, content, legacy: row.body_id === null };
    },
    async addressUsage(addressId) {
      const { rows } = await q<{ count: string; bytes: string }>(
        pool,
        'SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM mails WHERE address_id = $1 AND deleted_at IS NULL',
        [addressId],
      );
      return { count: Number(rows[0]!.count), bytes: Number(rows[0]!.bytes) };
    },
    async softDeleteMail(addressId, uuid) {
      const { rowCount } = await q(pool, 'UPDATE mails SET deleted_at = $1 WHERE address_id = $2 AND uuid = $3 AND deleted_at IS NULL', [
        Date.now(),
        addressId,
        uuid,
      ]);
      return (rowCount ?? 0) > 0;
    },
    async setSeen(addressId, uuid, seen) {
      const { rows } = await q<MailRow>(pool, `UPDATE mails SET seen = $1 WHERE address_id = $2 AND uuid = $3 AND deleted_at IS NULL RETURNING ${MAIL_COLUMNS}`, [
        seen,
        addressId,
        uuid,
      ]);
      return rows[0] && toSummary(rows[0]);
    },
    async clearMails(addressId) {
      const { rowCount } = await q(pool, 'UPDATE mails SET deleted_at = $1 WHERE address_id = $2 AND deleted_at IS NULL', [Date.now(), addressId]);
      return rowCount ?? 0;
    },
    async createSession(id, createdAt) {
      await q(pool, 'INSERT INTO sessions (id, active_address_id, created_at) VALUES ($1, NULL, $2)', [id, createdAt]);
    },
    async getSession(id) {
      const { rows } = await q<{ id: string; active_address_id: string | null; created_at: string }>(
        pool,
        'SELECT id, active_address_id, created_at FROM sessions WHERE id = $1',
        [id],
      );
      const row = rows[0];
      return (
        row && {
          id: row.id,
          activeAddressId: row.active_address_id === null ? null : Number(row.active_address_id),
          createdAt: Number(row.created_at),
        }
      );
    },
    async addSessionAddress(sessionId, addressId, addedAt, max) {
      await transaction(async (client) => {
        // Serialises concurrent additions to one session so the trim sees them all.
        await q(client, 'SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
        await q(
          client,
          'INSERT INTO session_addresses (session_id, address_id, added_at) VALUES ($1, $2, $3) ON CONFLICT (session_id, address_id) DO UPDATE SET added_at = excluded.added_at',
          [sessionId, addressId, addedAt],
        );
        await q(
          client,
          'DELETE FROM session_addresses WHERE session_id = $1 AND address_id NOT IN (SELECT address_id FROM session_addresses WHERE session_id = $1 ORDER BY added_at DESC, address_id DESC LIMIT $2)',
          [sessionId, max],
        );
        await q(client, 'UPDATE sessions SET active_address_id = $1, created_at = $2 WHERE id = $3', [addressId, addedAt, sessionId]);
      });
    },
    async listSessionAddresses(sessionId) {
      const { rows } = await q<AddressRow>(
        pool,
        'SELECT a.id, a.address, a.created_at FROM session_addresses s JOIN addresses a ON a.id = s.address_id WHERE s.session_id = $1 ORDER BY s.added_at ASC, a.id ASC',
        [sessionId],
      );
      return rows.map((r): SessionAddressRecord => ({ addressId: Number(r.id), address: r.address, createdAt: Number(r.created_at) }));
    },
    async rotateSession(oldId, newId, activeAddressId, renewedAt) {
      // session_addresses follows through ON UPDATE CASCADE.
      const { rowCount } = await q(pool, 'UPDATE sessions SET id = $1, active_address_id = $2, created_at = $3 WHERE id = $4', [newId, activeAddressId, renewedAt, oldId]);
      return (rowCount ?? 0) > 0;
    },
    async deleteSession(id) {
      const { rowCount } = await q(pool, 'DELETE FROM sessions WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    },
    async purge(c) {
      return transaction(async (client): Promise<PurgeResult> => {
        // Addresses first: their mail goes with them through ON DELETE CASCADE
        // (and, as in SQLite, is not counted in `mails`).
        // A sandbox's address stays as long as the sandbox, and its mail for the sandbox's own retention.
        const addresses = (await q(client, 'DELETE FROM addresses WHERE created_at < $1 AND id NOT IN (SELECT address_id FROM sandboxes)', [c.addressBefore])).rowCount ?? 0;
        let mails =
          (await q(client, 'DELETE FROM mails WHERE (created_at < $1 AND address_id NOT IN (SELECT address_id FROM sandboxes)) OR deleted_at IS NOT NULL', [c.mailBefore])).rowCount ?? 0;
        if (c.now !== undefined) {
          mails += (await q(client, 'DELETE FROM mails m USING sandboxes s WHERE m.address_id = s.address_id AND m.created_at < $1 - s.retention_ms', [c.now])).rowCount ?? 0;
        }
        const sessions = (await q(client, 'DELETE FROM sessions WHERE created_at < $1', [c.sessionBefore])).rowCount ?? 0;
        return { mails, addresses, sessions };
      });
    },
    deliveriesQueued: () => deliveriesQueued,
    // Other nodes write to the same database; there is no cheap way to know when.
    externalWriteMark() {
      return undefined;
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
