// The reads of an address's mail answered from the response cache while the address's mail
// is unchanged: GET /api/mails (a page of the list), GET /api/mail/{uuid} (one mail with
// its raw message) and GET /api/mail/{uuid}/parsed (registered by mails.ts).
import { FullMail, MailsQuery, MailsResponse, ParsedMail, routes, UuidParams } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { clientKey } from '../rate-limit.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import type { ResponseCache } from '../response-cache.js';
import type { LargeAnswers } from '../large-answers.js';
import { streamed, streamedRawJson, wholeRaw } from '../mail-answers.js';
import { parsedMailBody, rawToString, toItem } from '../presenters.js';
import { bearer, notFoundResponse, rateLimited, unauthorizedResponse } from './mail-options.js';
import type { RouteApp } from './route-app.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export function cachedMailRoutes(app: RouteApp, { deps, answers, cache }: { deps: HttpDeps; answers: LargeAnswers; cache: ResponseCache }): void {
  const { mail } = deps;
  /** Counts a look-up in the cache (METRICS_TOKEN): reused, built, or not reusable at all. */
  const reused = (route: string, version: string | undefined, body: Buffer | undefined) =>
    deps.metrics?.responseReuse(route, version === undefined ? 'off' : body === undefined ? 'miss' : 'hit');

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
        body = parsedMailBody(parsed.mail, parsed.content, parsed.reportSummary);
        // A degraded view is kept with the mail too (mail/parse/parsed-views.ts): it is the mail's view from now on.
        if (version !== undefined) cache.set(key, version, body);
      }
      return reply.type(JSON_TYPE).send(body);
    },
  );
}
