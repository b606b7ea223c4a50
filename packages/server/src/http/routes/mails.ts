import { create as contentDisposition } from 'content-disposition';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AttachmentParams, FullMail, MailListItem, MailsQuery, MailsResponse, ParsedMail, routes, SeenBody, SuccessResponse, UuidParams } from '@temp-inbox/api';
import type { MailSummary } from '../../storage/store.js';
import type { AttachmentStream, DecodedAttachment } from '../../mail/service.js';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { clientKey } from '../rate-limit.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import { createResponseCache } from '../response-cache.js';
import type { LargeAnswers } from '../large-answers.js';
import { STREAM_RAW_BYTES, streamed, streamedBytes, streamedRawJson, wholeOf, wholeRaw } from '../mail-answers.js';

const bearer = [{ bearer: [] }];
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
const notFoundResponse = errorResponse('Unknown, foreign, deleted or malformed uuid.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');
export { STREAM_RAW_BYTES };

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
function parsedMailBody(m: MailSummary, content: Buffer): Buffer {
  const own = JSON.stringify({
    id: m.id,
    uuid: m.uuid,
    message_id: m.messageId,
    created_at: new Date(m.createdAt).toISOString(),
    seen: m.seen,
    ...(m.envelope ? { recipients: m.envelope.to } : {}),
  });
  return Buffer.concat([Buffer.from(`${own.slice(0, -1)},`), content.subarray(1)]);
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

export const mailRoutes: FastifyPluginAsync<{ deps: HttpDeps; answers: LargeAnswers }> = async (fastify, { deps, answers }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail } = deps;
  // Serialised list pages and mails, reused while the address's mail is unchanged.
  const cache = createResponseCache();
  fastify.addHook('onClose', async () => cache.close());
  /** Counts a look-up in the cache (METRICS_TOKEN): reused, built, or not reusable at all. */
  const reused = (route: string, version: string | undefined, body: Buffer | undefined) =>
    deps.metrics?.responseReuse(route, version === undefined ? 'off' : body === undefined ? 'miss' : 'hit');
  const JSON_TYPE = 'application/json; charset=utf-8';

  app.get(
    routes.mails,
    {
      config: { rateLimit: 'MAILS' },
      preValidation: strictIntegers('limit', 'offset'),
      schema: {
        summary: 'List mail, newest first',
        description: 'Never stale: a mail is listed as soon as SMTP answered 250 for it. `count` is the total of live mails.',
        tags: ['mail'],
        security: bearer,
        querystring: MailsQuery,
        response: {
          200: MailsResponse,
          400: errorResponse('limit (1..100) and offset (>= 0) are both required integers.'),
          401: unauthorizedResponse,
          429: rateLimited,
        },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      const { limit, offset } = request.query;
      // Read before the query: a change that lands after it makes the entry stale at once.
      const version = address.mailSetVersion;
      const key = `l:${address.id}:${limit}:${offset}`;
      let body = version === undefined ? undefined : cache.get(key, version);
      reused(routes.mails, version, body);
      if (body === undefined) {
        const page = await mail.listMails(address.id, limit, offset);
        body = Buffer.from(reply.serialize({ results: page.results.map(toItem), count: page.count }) as string);
        if (version !== undefined) cache.set(key, version, body);
      }
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.get(
    routes.mail,
    {
      config: { rateLimit: 'MAIL' },
      schema: {
        summary: 'Read one mail with its raw message',
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        response: { 200: FullMail, 401: unauthorizedResponse, 404: notFoundResponse, 429: rateLimited },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      const version = address.mailSetVersion;
      const key = `m:${address.id}:${request.params.uuid}`;
      let body = version === undefined ? undefined : cache.get(key, version);
      reused(routes.mail, version, body);
      if (body === undefined) {
        const m = await mail.openMail(address.id, request.params.uuid);
        // Too large to be kept in the cache: streamed from the store's parts, never held whole (mail-answers.ts).
        if (streamed(m)) return reply.type(JSON_TYPE).send(await streamedRawJson(request, reply, answers, m, reply.serialize({ ...toItem(m), raw: '' }) as string));
        body = Buffer.from(reply.serialize({ ...toItem(m), raw: rawToString(await wholeRaw(m)) }) as string);
        if (version !== undefined) cache.set(key, version, body);
      }
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.patch(
    routes.mail,
    {
      // The bucket of GET /api/mail/{uuid}: a client that reads a mail then marks it read spends two of the same.
      config: { rateLimit: 'MAIL' },
      schema: {
        summary: 'Mark one mail read or unread',
        description:
          'Sets the mail\'s `seen` flag and answers the mail as GET /api/mails lists it. Reading a mail (GET /api/mail/{uuid}, /parsed) never sets it; the web UI sets it when a mail is opened.',
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        body: SeenBody,
        response: {
          200: MailListItem,
          400: errorResponse('The body is not JSON of the form {"seen": true|false}.'),
          401: unauthorizedResponse,
          404: notFoundResponse,
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      return toItem(await mail.setSeen(address.id, request.params.uuid, request.body.seen));
    },
  );

  app.get(
    routes.parsedMail,
    {
      config: { rateLimit: 'PARSED_MAIL' },
      schema: {
        summary: 'Read one mail parsed: decoded headers, addresses, text, HTML, attachments, codes and links',
        description: [
          'The message is parsed again, in a worker thread within PARSE_TIMEOUT. `text` and `html` are whole, never cut; `headers` are',
          'the top-level headers in order, decoded, at most 1,000 and 256 Ki characters in all (`headers_truncated`). A message that cannot',
          'be parsed within the budget answers what its header block gives, with `degraded: true`; that answer is kept with the mail, which is',
          'not parsed again. A client may have PARSE_VIEWS_PER_CLIENT views waiting for the parser at once (more: 429).',
        ].join(' '),
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        response: {
          200: ParsedMail,
          401: unauthorizedResponse,
          404: notFoundResponse,
          429: rateLimited,
          503: errorResponse('Every parser thread stayed busy; see Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      const version = address.mailSetVersion;
      const key = `p:${address.id}:${request.params.uuid}`;
      let body = version === undefined ? undefined : cache.get(key, version);
      reused(routes.parsedMail, version, body);
      if (body === undefined) {
        const parsed = await mail.readParsed(address.id, request.params.uuid, clientKey(request.ip));
        body = parsedMailBody(parsed.mail, parsed.content);
        // A degraded view is kept with the mail too (mail/parse/parsed-views.ts): it is the mail's view from now on.
        if (version !== undefined) cache.set(key, version, body);
      }
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.delete(
    routes.deleteMail,
    {
      schema: {
        summary: 'Soft-delete one mail',
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 404: notFoundResponse },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      await mail.deleteMail(address.id, request.params.uuid);
      return { success: true };
    },
  );

  app.delete(
    routes.clearInbox,
    {
      config: { rateLimit: 'CLEAR_INBOX' },
      schema: {
        summary: 'Delete all mail of the address',
        tags: ['mail'],
        security: bearer,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      await mail.clearInbox(address.id);
      return { success: true };
    },
  );

  app.get(
    routes.attachment,
    {
      config: { rateLimit: 'ATTACHMENT' },
      schema: {
        summary: 'Download one attachment, decoded',
        description: 'The decoded bytes with the part\'s Content-Type and `Content-Disposition: attachment`. Ids come from the metadata `attachments` list.',
        tags: ['mail'],
        security: bearer,
        params: AttachmentParams,
        response: {
          200: { description: 'The attachment bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          401: unauthorizedResponse,
          404: errorResponse('Unknown mail or attachment.'),
          429: rateLimited,
        },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      return sendStoredAttachment(request, reply, answers, await mail.openAttachment(address.id, request.params.uuid, request.params.attachmentId));
    },
  );
};
