// Reading live mail in SQLite (store.ts MailStore): the list and its count, a mail whole
// or a part at a time (storage/parts.ts), its attachments, and an address's usage.
import type Database from 'better-sqlite3';
import type { MailEnvelope, MailStore, MailSummary } from '../store.js';
import { joinParts, partsReader } from '../parts.js';
import { SUMMARY_COLUMNS, type SummaryRow } from './summary-row.js';

/** A mail's row: its summary's columns, and the message's when they are read. */
export interface MailRow extends SummaryRow {
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

export { SUMMARY_COLUMNS };

export const toSummary = (r: MailRow): MailSummary => ({
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

export type MailReads = Pick<MailStore, 'listMails' | 'getMail' | 'openMail' | 'openAttachment' | 'getAttachment' | 'addressUsage'>;

export function sqliteMailReads(db: Database.Database): MailReads {
  const q = {
    attachmentParts: db.prepare('SELECT data FROM body_attachment_parts WHERE attachment_id = ? ORDER BY part').pluck(),
    attachmentPart: db.prepare('SELECT data FROM body_attachment_parts WHERE attachment_id = ? AND part = ?').pluck(),
    // Mail stored before 0004 keeps its whole message in mails.raw and mail_raw_parts.
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
      `SELECT ${SUMMARY_COLUMNS}, m.raw, m.raw_parts, m.body_id, b.data AS body, b.parts AS body_parts, ` +
        // length() of a blob reads its size, not its pages.
        '(SELECT coalesce(sum(length(p.data)), 0) FROM body_parts p WHERE p.body_id = m.body_id AND b.parts > 1) AS rest_bytes ' +
        'FROM mails m LEFT JOIN bodies b ON b.id = m.body_id WHERE m.address_id = ? AND m.uuid = ? AND m.deleted_at IS NULL',
    ),
  };
  /** The whole message of mail stored before 0004 (no body). */
  const legacyRaw = (row: MailRow) => (row.raw_parts! > 1 ? Buffer.concat([row.raw!, ...(q.rawParts.all(row.id) as Buffer[])]) : row.raw!);
  return {
    async listMails(addressId, limit, offset) {
      const rows = q.listMails.all(addressId, limit, offset) as MailRow[];
      // The count is only needed past a short first page.
      const count = offset === 0 && rows.length < limit ? rows.length : (q.countMails.get(addressId) as number);
      return { results: rows.map(toSummary), count };
    },
    async getMail(addressId, uuid) {
      const row = q.getMail.get(addressId, uuid) as MailRow | undefined;
      if (!row) return undefined;
      // Read a part at a time into the whole (storage/parts.ts), not all parts and then their join.
      const raw =
        row.body_id != null ? joinParts([row.raw!, row.body!], row.rest_bytes!, row.body_parts! > 1 ? (q.bodyParts.iterate(row.body_id) as Iterable<Buffer>) : []) : legacyRaw(row);
      return raw && { ...toSummary(row), raw };
    },
    async openMail(addressId, uuid) {
      const row = q.getMail.get(addressId, uuid) as MailRow | undefined;
      if (!row) return undefined;
      if (row.body_id == null) {
        // Read whole, as getMail reads it.
        const raw = legacyRaw(row);
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
  };
}
