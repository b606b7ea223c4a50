// A mail's attachments as its metadata lists them: read from the bytes kept at delivery,
// a piece at a time, or (mail stored before attachments were kept) parsed again in a worker.
import type { MailMetadata } from '@temp-inbox/api';
import { notFound } from '../domain/errors.js';
import { PartsGoneError } from '../storage/parts.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { MessageParser } from './parse/parse.js';

export interface DecodedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** An attachment's name and type, and its decoded bytes to read a piece at a time. */
export interface AttachmentStream {
  filename: string;
  contentType: string;
  bytes: number;
  pieces(): AsyncIterable<Buffer> | Iterable<Buffer>;
}

export interface AttachmentReader {
  openAttachment(addressId: number, uuid: string, attachmentId: string): Promise<AttachmentStream>;
  getAttachment(addressId: number, uuid: string, attachmentId: string): Promise<DecodedAttachment>;
}

export function createAttachmentReader({ store, parser }: { store: VersionedStore; parser: MessageParser }): AttachmentReader {
  /**
   * Attachment `attachmentId` (an index the metadata lists) with its bytes left in the store,
   * to be read a part at a time; 404 when there is none.
   */
  async function openAttachment(addressId: number, uuid: string, attachmentId: string): Promise<AttachmentStream> {
    // Only the ids the metadata lists ("0", "1", ...): "00" or "01" are unknown ids, 404.
    if (!/^(0|[1-9]\d{0,5})$/.test(attachmentId)) throw notFound('No such attachment.');
    const index = Number(attachmentId);
    const stored = await store.openAttachment(addressId, uuid, index);
    const info = stored && (JSON.parse(stored.metadata) as MailMetadata).attachments[index];
    if (!stored || !info) throw notFound('No such attachment.');
    const named = { filename: info.filename, contentType: info.content_type };
    if (stored.bytes !== null) return { ...named, bytes: stored.bytes, pieces: stored.pieces };
    if (!stored.legacy) throw notFound('No such attachment.');
    // Mail stored before attachments were kept: parsed again, in a worker, within its budget.
    const mail = await store.getMail(addressId, uuid);
    if (!mail) throw notFound('No such mail.');
    const content = (await parser.readAttachment(mail.raw, index))?.content;
    if (!content) throw notFound('No such attachment.');
    return { ...named, bytes: content.length, pieces: () => [content] };
  }

  async function getAttachment(addressId: number, uuid: string, attachmentId: string): Promise<DecodedAttachment> {
    const { pieces, bytes: _bytes, ...named } = await openAttachment(addressId, uuid, attachmentId);
    const read: Buffer[] = [];
    try {
      for await (const piece of pieces()) read.push(piece);
    } catch (err) {
      if (err instanceof PartsGoneError) throw notFound('No such attachment.');
      throw err;
    }
    return { ...named, content: read.length === 1 ? read[0]! : Buffer.concat(read) };
  }

  return { openAttachment, getAttachment };
}
