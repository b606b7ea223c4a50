// Messages, sources and downloads of the mail.tm-compatible API: the address's mail as
// mail.tm's Message (mailtm/shapes.ts), read through the mail service like our own routes
// (RATE_LIMIT_MAILTM: mail.tm's quota; a message, which is parsed, RATE_LIMIT_PARSED_MAIL; a source,
// download or attachment RATE_LIMIT_MAILTM_DOWNLOAD). A message's id is the mail's uuid, so the same
// mail has the same id here and in GET /api/mail/{uuid}; `seen` is the flag the web UI shows.
import type { FastifyPluginAsync } from 'fastify';
import { mounts, routes, within } from '@temp-inbox/api';
import { AppError } from '../../../domain/errors.js';
import { notFound } from '../../../domain/errors.js';
import { messageBody } from '../../../mailtm/message-view.js';
import { attachmentIndex, collection, messageItem, messageIri, resource, source, sourceIri, PAGE_SIZE } from '../../../mailtm/shapes.js';
import { rawBody, streamed, streamedRawJson, wholeRaw } from '../../mail-answers.js';
import { clientKey } from '../../rate-limit.js';
import { rawToString, sendStoredAttachment, stored } from '../../presenters.js';
import type { MailtmRouteOptions } from './options.js';
import { authenticate, formatOf, pageOf, sendJson } from './respond.js';

const hidden = { schema: { hide: true } } as const;

type IdParams = { Params: { id: string } };

export const messageRoutes: FastifyPluginAsync<MailtmRouteOptions> = async (fastify, { deps, mailtm, answers }) => {
  const { mail } = deps;
  const retentionMs = deps.config.mail.mailTtlMs;

  fastify.get(within(mounts.mailtm, routes.mailtmMessages), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    const { page, offset } = pageOf(request);
    const accountId = mailtm.accountId(address);
    const list = await mail.listMails(address.id, PAGE_SIZE, offset);
    const members = list.results.map((m) => ({ iri: messageIri(m.uuid), body: messageItem(stored(m), accountId) }));
    return sendJson(reply.header('cache-control', 'no-store'), 200, format, collection(format, 'Message', '/messages', members, list.count, page));
  });

  // A parse of the message, as GET /api/mail/{uuid}/parsed: the same budget (RATE_LIMIT_PARSED_MAIL), shared with it.
  fastify.get<IdParams>(within(mounts.mailtm, routes.mailtmMessage), { ...hidden, config: { rateLimit: 'PARSED_MAIL' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    const view = await mail.readParsed(address.id, request.params.id, clientKey(request.ip));
    const body = await messageBody({ format, stored: stored(view.mail), accountId: mailtm.accountId(address), retentionMs }, view.content);
    return sendJson(reply.header('cache-control', 'no-store'), 200, format, body);
  });

  // JSON Merge Patch (RFC 7396): only `seen` can change; without it nothing does.
  fastify.patch<IdParams>(within(mounts.mailtm, routes.mailtmMessage), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('bad_request', 'Syntax error');
    const seen = (body as Record<string, unknown>)['seen'];
    if (seen !== undefined && typeof seen !== 'boolean') throw new AppError('bad_request', `The type of the "seen" attribute must be "bool", "${seen === null ? 'null' : typeof seen}" given.`);
    const m = seen === undefined ? await mail.getMail(address.id, request.params.id) : await mail.setSeen(address.id, request.params.id, seen);
    return sendJson(reply, 200, format, resource(format, 'Message', messageIri(m.uuid), messageItem(stored(m), mailtm.accountId(address))));
  });

  fastify.delete<IdParams>(within(mounts.mailtm, routes.mailtmMessage), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const address = await authenticate(request, mail);
    await mail.deleteMail(address.id, request.params.id);
    return reply.code(204).send();
  });

  // A message's source has the message's id.
  // The routes that answer a whole message or attachment have their own limit (RATE_LIMIT_MAILTM_DOWNLOAD), not mail.tm's polling quota.
  fastify.get<IdParams>(within(mounts.mailtm, routes.mailtmSource), { ...hidden, config: { rateLimit: 'MAILTM_DOWNLOAD' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    const m = await mail.openMail(address.id, request.params.id);
    reply.header('cache-control', 'no-store');
    // A large message is streamed from the store's parts, as GET /api/mail/{uuid} streams it (http/mail-answers.ts).
    if (streamed(m)) return sendJson(reply, 200, format, await streamedRawJson(request, reply, answers, m, JSON.stringify(resource(format, 'Source', sourceIri(m.uuid), source(m.uuid, ''))), 'data'));
    return sendJson(reply, 200, format, resource(format, 'Source', sourceIri(m.uuid), source(m.uuid, rawToString(await wholeRaw(m)))));
  });

  // The message as received (downloadUrl): an .eml file.
  fastify.get<IdParams>(within(mounts.mailtm, routes.mailtmMessageDownload), { ...hidden, config: { rateLimit: 'MAILTM_DOWNLOAD' } }, async (request, reply) => {
    const address = await authenticate(request, mail);
    const m = await mail.openMail(address.id, request.params.id);
    const body = await rawBody(request, reply, answers, m);
    return reply
      .header('content-type', 'message/rfc822')
      .header('content-disposition', `attachment; filename="${m.uuid}.eml"`)
      .header('cache-control', 'private, no-store')
      .send(body);
  });

  fastify.get<{ Params: { id: string; attachment: string } }>(within(mounts.mailtm, routes.mailtmMessageAttachment), { ...hidden, config: { rateLimit: 'MAILTM_DOWNLOAD' } }, async (request, reply) => {
    const address = await authenticate(request, mail);
    const index = attachmentIndex(request.params.attachment);
    if (index === undefined) throw notFound();
    return sendStoredAttachment(request, reply, answers, await mail.openAttachment(address.id, request.params.id, index));
  });
};
