// Storing and changing mail in PostgreSQL (store.ts MailStore), as sqlite-mail-writes.ts
// does in SQLite: each delivery's bodies once (in parts, storage/parts.ts), its mails with
// their search lexemes, its webhook deliveries and the day's count in one transaction.
import type pg from 'pg';
import { DAY_MS, type MailBody, type MailStore, type NewMail } from '../store.js';
import { partsOf } from '../parts.js';
import { indexWords } from '../search-words.js';
import { countGarbage, endOfMessage } from '../../memory/young-garbage.js';
import { query as q, type Transaction } from './postgres-connection.js';
import { MAIL_COLUMNS, toSummary, type MailRow } from './postgres-mail-reads.js';
import { MAIL_DAY_SHARDS } from './postgres-operator.js';
import { queueWebhooks } from './postgres-webhooks.js';
import { countDomainMails } from './postgres-domain-stats.js';

// First key of the two-key advisory lock that orders one address's deliveries ("ti" + "ml").
const MAIL_ORDER_LOCK = 0x74696d6c;

/** A mail's search lexemes (array_to_tsvector refuses an empty array: none instead). */
const lexemes = (addressId: number, text: string): string[] | null => {
  const words = indexWords(addressId, text);
  return words.length ? words : null;
};

export type MailWrites = Pick<MailStore, 'insertMails' | 'deliveriesQueued' | 'softDeleteMail' | 'setSeen' | 'clearMails'>;

/** Each distinct body of the delivery once, in parts; returns their ids by body. */
async function insertBodies(client: pg.PoolClient, mails: NewMail[]): Promise<Map<MailBody, string>> {
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
  return bodyIds;
}

/** The delivery's mails (their bodies stored), in order; returns their ids. */
async function insertMailRows(client: pg.PoolClient, mails: NewMail[], bodyIds: Map<MailBody, string>): Promise<number[]> {
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
  return ids;
}

export function postgresMailWrites(pool: pg.Pool, transaction: Transaction): MailWrites {
  let deliveriesQueued = 0;
  // The hour this node last pruned the per-domain counts at (postgres-domain-stats.ts).
  const pruned = { hour: 0 };
  return {
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
        const ids = await insertMailRows(client, mails, await insertBodies(client, mails));
        // The mails' webhook deliveries, committed with them (docs/decisions.md "Webhooks").
        deliveriesQueued += await queueWebhooks(
          client,
          ids,
          ids.filter((_, i) => mails[i]!.operatorWebhook === true),
          mails.map((m) => m.webhooksDueAt ?? null),
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
        // The admin's per-domain figures, in the same shard as the day's count.
        await countDomainMails(client, mails, addressIds[0]! % MAIL_DAY_SHARDS, pruned);
        return ids;
      });
    },
    deliveriesQueued: () => deliveriesQueued,
    async softDeleteMail(addressId, uuid) {
      const { rowCount } = await q(pool, 'UPDATE mails SET deleted_at = $1 WHERE address_id = $2 AND uuid = $3 AND deleted_at IS NULL', [Date.now(), addressId, uuid]);
      return (rowCount ?? 0) > 0;
    },
    async setSeen(addressId, uuid, seen) {
      const { rows } = await q<MailRow>(pool, `UPDATE mails SET seen = $1 WHERE address_id = $2 AND uuid = $3 AND deleted_at IS NULL RETURNING ${MAIL_COLUMNS}`, [seen, addressId, uuid]);
      return rows[0] && toSummary(rows[0]);
    },
    async clearMails(addressId) {
      const { rowCount } = await q(pool, 'UPDATE mails SET deleted_at = $1 WHERE address_id = $2 AND deleted_at IS NULL', [Date.now(), addressId]);
      return rowCount ?? 0;
    },
  };
}
