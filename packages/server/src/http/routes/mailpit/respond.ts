// What every route of the Mailpit-compatible API shares: its sandbox (basic-auth.ts),
// "latest" as an ID, and Mailpit's answers (JSON, or the plain-text "ok"; the stored mail as
// Mailpit's shapes take it comes from ../../presenters.ts). Errors are our plain text, as
// Mailpit's own are.
import type { FastifyReply } from 'fastify';
import { notFound } from '../../../domain/errors.js';
import type { MailService } from '../../../mail/service.js';
import type { Sandbox } from '../../../sandboxes/types.js';

export { answering, routeOptions, sandboxHook, sandboxOf } from '../../basic-auth.js';

export const sendJson = (reply: FastifyReply, body: unknown): FastifyReply =>
  reply
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body));

export const sendOk = (reply: FastifyReply): FastifyReply => reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('ok');

/** A message ID of the URL: the mail's uuid, or "latest" for the newest; 404 when the sandbox has no such mail. */
export async function resolveId(mail: MailService, sandbox: Sandbox, id: string): Promise<string> {
  if (id !== 'latest') return id;
  const newest = await mail.listMails(sandbox.addressId, 1, 0);
  const first = newest.results[0];
  if (!first) throw notFound('No message found.');
  return first.uuid;
}
