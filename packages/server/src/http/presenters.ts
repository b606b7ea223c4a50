// The presenters: every mapping of a stored row to what the HTTP layer answers (our API's
// shapes, and what the mail.tm, Mailpit and MailHog shapes are built from), and the replies
// that send an attachment. Routes import them from here, never from a sibling route file.
import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MailListItem, MailMetadata } from '@temp-inbox/api';
import type { MailhogJob } from '../mailhog/message-view.js';
import type { AttachmentStream, DecodedAttachment } from '../mail/service.js';
import type { MailpitMail } from '../mailpit/shapes.js';
import type { StoredMail } from '../mailtm/shapes.js';
import type { Sandbox } from '../sandboxes/types.js';
import type { MailSummary, Store } from '../storage/store.js';
import type { LargeAnswers } from './large-answers.js';
import { STREAM_RAW_BYTES, streamedBytes, wholeOf } from './mail-answers.js';

// Our API.

export const toItem = (m: MailSummary): MailListItem => ({
  id: m.id,
  uuid: m.uuid,
  source: m.source,
  address: m.address,
  metadata: m.metadata,
  created_at: new Date(m.createdAt).toISOString(),
  message_id: m.messageId,
  seen: m.seen,
  // A sandbox's mail: its envelope's recipients (one mail stands for all of them).
  ...(m.envelope ? { recipients: m.envelope.to } : {}),
});

/**
 * A ParsedMail's bytes: the mail's own fields, then the content the parser's worker
 * serialised (a JSON object of the other fields), joined without parsing it again.
 */
export function parsedMailBody(m: MailSummary, content: Buffer, reportSummary?: string): Buffer {
  const own = JSON.stringify({
    id: m.id,
    uuid: m.uuid,
    message_id: m.messageId,
    created_at: new Date(m.createdAt).toISOString(),
    seen: m.seen,
    ...(m.envelope ? { recipients: m.envelope.to } : {}),
  });
  // The report summary as it was kept (JSON text), after the parsed fields.
  const report = reportSummary === undefined ? '' : `,"report":${reportSummary}`;
  return Buffer.concat([Buffer.from(`${own.slice(0, -1)},`), content.subarray(1, report ? -1 : undefined), Buffer.from(report ? `${report}}` : '')]);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The stored bytes as a string: UTF-8 when they are valid UTF-8, else one character per byte (latin1). */
export function rawToString(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    return raw.toString('latin1');
  }
}

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name; path separators and control characters never reach it. */
function attachmentDisposition(filename: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = filename.replace(/[/\\]/g, '_').replace(/[\u0000-\u001f\u007f]/g, '') || 'attachment';
  return contentDisposition(clean, { type: 'attachment' });
}

/** An RFC 9110 media type (token/token); \x60 is the backtick, which tchar allows. */
const TOKEN = /^[!#$%&'*+.^_\x60|~0-9A-Za-z-]+\/[!#$%&'*+.^_\x60|~0-9A-Za-z-]+$/;

/** An attachment's headers: its type when well formed, as a download, sandboxed, never cached. */
function attachmentHeaders(reply: FastifyReply, a: { filename: string; contentType: string }): FastifyReply {
  const type = TOKEN.test(a.contentType) ? a.contentType.toLowerCase() : 'application/octet-stream';
  return reply
    .header('content-type', type)
    .header('content-disposition', attachmentDisposition(a.filename))
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cache-control', 'private, no-store');
}

/**
 * Sends an attachment's decoded bytes, held whole. A large one is counted as a large
 * answer (large-answers.ts), so its client's cap bounds what it holds.
 */
export function sendAttachment(request: FastifyRequest, reply: FastifyReply, answers: LargeAnswers, a: DecodedAttachment): FastifyReply {
  if (a.content.length > STREAM_RAW_BYTES) answers.admit(request, reply, a.content.length);
  return attachmentHeaders(reply, a).send(a.content);
}

/**
 * Sends an attachment from the store (also the mail.tm API's download): whole when small,
 * else read a part at a time as the client takes it, a large answer (mail-answers.ts).
 */
export async function sendStoredAttachment(request: FastifyRequest, reply: FastifyReply, answers: LargeAnswers, a: AttachmentStream): Promise<FastifyReply> {
  const body = a.bytes > STREAM_RAW_BYTES ? streamedBytes(request, reply, answers, a.bytes, a.pieces()) : await wholeOf(a.pieces());
  return attachmentHeaders(reply, a).send(body);
}

/** A sandbox's answer shape (GET /api/sandbox, the admin's list). */
export const sandboxInfo = (s: Sandbox) => ({
  id: s.id,
  name: s.name,
  address: s.address,
  max_mails: s.maxMails,
  max_bytes: s.maxBytes,
  retention_ms: s.retentionMs,
  chaos: s.chaos,
  created_at: new Date(s.createdAt).toISOString(),
});

// mail.tm's, Mailpit's and MailHog's shapes start from these.

export const stored = (m: MailSummary): StoredMail => ({
  uuid: m.uuid,
  messageId: m.messageId,
  createdAt: m.createdAt,
  seen: m.seen,
  metadata: JSON.parse(m.metadata) as MailMetadata,
});

/** A stored mail of the sandbox as the presenters take it. */
export const mailpitMail = (m: MailSummary, sandbox: Sandbox, tags: string[]): MailpitMail => ({
  uuid: m.uuid,
  messageId: m.messageId,
  createdAt: m.createdAt,
  seen: m.seen,
  metadata: JSON.parse(m.metadata) as MailMetadata,
  tags,
  username: sandbox.name,
  envelopeTo: m.envelope?.to,
  envelopeFrom: m.envelope?.from,
});

/** Each listed mail with its tags. */
export async function withTags(store: Store, sandbox: Sandbox, mails: MailSummary[]): Promise<MailpitMail[]> {
  const tags = await store.mailTags(
    sandbox.addressId,
    mails.map((m) => m.id),
  );
  return mails.map((m) => mailpitMail(m, sandbox, tags.get(m.id) ?? []));
}

/** A stored mail as MailHog's message shape takes it (mailhog/message-view.ts). */
export function jobOf(m: MailSummary): MailhogJob {
  const metadata = JSON.parse(m.metadata) as MailMetadata;
  return {
    uuid: m.uuid,
    createdAt: m.createdAt,
    from: m.envelope?.from ?? m.source,
    to: m.envelope?.to ?? [metadata.delivered_to ?? m.address],
    helo: '',
  };
}
