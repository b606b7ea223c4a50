// What every route of the Mailpit-compatible API shares: its sandbox (basic-auth.ts), the
// stored mail as the presenters take it, "latest" as an ID, and Mailpit's answers (JSON,
// or the plain-text "ok"). Errors are our plain text, as Mailpit's own are.
import type { FastifyReply } from 'fastify';
import type { MailMetadata } from '@temp-inbox/api';
import { notFound } from '../../../domain/errors.js';
import type { MailService } from '../../../mail/service.js';
import type { MailpitMail } from '../../../mailpit/shapes.js';
import type { Sandbox } from '../../../sandboxes/types.js';
import type { MailSummary, Store } from '../../../storage/store.js';

export { routeOptions, sandboxHook, sandboxOf } from '../../basic-auth.js';

export const sendJson = (reply: FastifyReply, body: unknown): FastifyReply =>
  reply
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body));

export const sendOk = (reply: FastifyReply): FastifyReply => reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('ok');

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

/** A message ID of the URL: the mail's uuid, or "latest" for the newest; 404 when the sandbox has no such mail. */
export async function resolveId(mail: MailService, sandbox: Sandbox, id: string): Promise<string> {
  if (id !== 'latest') return id;
  const newest = await mail.listMails(sandbox.addressId, 1, 0);
  const first = newest.results[0];
  if (!first) throw notFound('No message found.');
  return first.uuid;
}
