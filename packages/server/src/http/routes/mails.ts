import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AttachmentParams, FullMail, MailListItem, MailsQuery, MailsResponse, ParsedMail, routes, SeenBody, SuccessResponse, UuidParams } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { clientKey } from '../rate-limit.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import { createResponseCache } from '../response-cache.js';
import type { LargeAnswers } from '../large-answers.js';
import { streamed, streamedRawJson, wholeRaw } from '../mail-answers.js';
import { parsedMailBody, rawToString, sendStoredAttachment, toItem } from '../presenters.js';

const bearer = [{ bearer: [] }];
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
const notFoundResponse = errorResponse('Unknown, foreign, deleted or malformed uuid.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');
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
