// Reading live mail in PostgreSQL (store.ts MailStore), as sqlite-mail-reads.ts does in
// SQLite: the list and its count, a mail whole or a part at a time (storage/parts.ts), its
// attachments, and an address's usage.
import type pg from 'pg';
import type { MailEnvelope, MailStore, MailSummary } from '../store.js';
import { partsJoiner, partsReader } from '../parts.js';
import { countGarbage } from '../../memory/young-garbage.js';
import { query as q } from './postgres-connection.js';

export interface MailRow {
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

export const MAIL_COLUMNS = 'id, uuid, source, address, metadata, message_id, created_at, seen, envelope';
/** MAIL_COLUMNS of the table aliased m. */
export const M_COLUMNS = MAIL_COLUMNS.split(', ').map((c) => `m.${c}`).join(', ');

export const toSummary = (r: MailRow): MailSummary => ({
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

export type MailReads = Pick<MailStore, 'listMails' | 'getMail' | 'openMail' | 'openAttachment' | 'getAttachment' | 'addressUsage'>;

const LIVE = 'FROM mails WHERE address_id = $1 AND deleted_at IS NULL';
const COUNT = `SELECT count(*) AS n ${LIVE}`;
// The count is an uncorrelated subquery: PostgreSQL runs it once (an InitPlan), beside the page read through the index.
const LIST = `SELECT ${MAIL_COLUMNS}, (${COUNT}) AS total ${LIVE} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`;
const BODY_PART = 'SELECT data FROM body_parts WHERE body_id = $1 AND part = $2';
const ATTACHMENT_PART = 'SELECT data FROM body_attachment_parts WHERE body_id = $1 AND idx = $2 AND part = $3';

export function postgresMailReads(pool: pg.Pool): MailReads {
  /** A part read by `text`; read as hex, about four times the part is left behind (see whole). */
  const readPart = async (text: string, values: unknown[]): Promise<Buffer | undefined> => {
    const data = (await q<{ data: Buffer }>(pool, text, values)).rows[0]?.data;
    if (data) countGarbage(4 * data.length);
    return data;
  };
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
      const data = await readPart(text, [...values, part]);
      if (!data || !joined.add(data)) return undefined;
    }
    return joined.done();
  };
  /** A live mail's row with its head pieces (raw, the body's first part) and the size of the body's further parts. */
  const mailRow = async (addressId: number, uuid: string): Promise<MailRow | undefined> =>
    (
      await q<MailRow>(
        pool,
        `SELECT ${M_COLUMNS}, m.raw, m.body_id, b.data AS body, b.parts AS body_parts, ` +
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
  return {
    async listMails(addressId, limit, offset) {
      // The page and its count in one statement (one round trip, one snapshot); a page past the end has no row to carry the count.
      const { rows } = await q<MailRow & { total: string }>(pool, LIST, [addressId, limit, offset]);
      let count = rows.length === 0 ? 0 : Number(rows[0]!.total);
      if (rows.length === 0 && offset > 0) {
        const res = await q<{ n: string }>(pool, COUNT, [addressId]);
        count = Number(res.rows[0]!.n);
      }
      return { results: rows.map(toSummary), count };
    },
    async getMail(addressId, uuid) {
      const row = await mailRow(addressId, uuid);
      if (!row) return undefined;
      // Mail stored before 0004 holds its whole message in raw and no body.
      if (!row.body) return { ...toSummary(row), raw: row.raw! };
      const raw = await whole([row.raw!, row.body], Number(row.rest_bytes), row.body_parts!, BODY_PART, [row.body_id!]);
      return raw && { ...toSummary(row), raw };
    },
    async openMail(addressId, uuid) {
      const row = await mailRow(addressId, uuid);
      if (!row) return undefined;
      if (!row.body) return { ...toSummary(row), bytes: row.raw!.length, pieces: partsReader([row.raw!], row.raw!.length, 1, () => undefined) };
      const bodyId = row.body_id!;
      const bytes = row.raw!.length + row.body.length + Number(row.rest_bytes);
      return { ...toSummary(row), bytes, pieces: partsReader([row.raw!, row.body], bytes, row.body_parts!, (part) => readPart(BODY_PART, [bodyId, part])) };
    },
    async openAttachment(addressId, uuid, index) {
      const row = await attachmentRow(addressId, uuid, index);
      if (!row) return undefined;
      const { content, body_id: bodyId } = row;
      const bytes = content && content.length + Number(row.rest_bytes);
      const pieces = content ? partsReader([content], bytes!, row.parts!, (part) => readPart(ATTACHMENT_PART, [bodyId, index, part])) : partsReader([], 0, 1, () => undefined);
      return { metadata: row.metadata, legacy: bodyId === null, bytes, pieces };
    },
    async getAttachment(addressId, uuid, index) {
      const row = await attachmentRow(addressId, uuid, index);
      if (!row) return undefined;
      const content = row.content && (await whole([row.content], Number(row.rest_bytes), row.parts!, ATTACHMENT_PART, [row.body_id!, index]));
      if (content === undefined) return undefined;
      return { metadata: row.metadata, content, legacy: row.body_id === null };
    },
    async addressUsage(addressId) {
      const { rows } = await q<{ count: string; bytes: string }>(pool, 'SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM mails WHERE address_id = $1 AND deleted_at IS NULL', [
        addressId,
      ]);
      return { count: Number(rows[0]!.count), bytes: Number(rows[0]!.bytes) };
    },
  };
}
