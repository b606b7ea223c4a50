// The MailHog-compatible API under /mailhog/api (docs/api.md "Moving from Mailpit or
// MailHog"): MailHog's clients work with https://<host>/mailhog as their base (API base path
// /mailhog/api) and a sandbox's name and password as their Basic credentials. GET
// /v2/messages and /v2/search page the sandbox's mail in MailHog's message shape
// (mailhog/shapes.ts); GET /v1/messages, /v1/messages/{ID} and its /download read it;
// DELETE /v1/messages and /v1/messages/{ID} delete; release is refused
// (nothing leaves a sandbox). Always mounted: without valid credentials every route is 401.
// A page is written one message at a time, each read from the store as it is written, so
// the server holds one message of it at a time, however many the page has.
import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MailhogMessage, MailhogMessageList, MailhogMessagesResponse, mounts, routes, within, type MailMetadata } from '@temp-inbox/api';
import { AppError, badRequest, notFound } from '../../../domain/errors.js';
import { messageJson } from '../../../mailhog/message-view.js';
import { PAGE_TAIL, pageHead } from '../../../mailhog/shapes.js';
import type { MailService } from '../../../mail/service.js';
import type { Sandbox, SandboxService } from '../../../sandboxes/types.js';
import { parseSearchQuery, type ParsedSearch } from '../../../storage/search-query.js';
import type { MailSummary } from '../../../storage/store.js';
import { answering, routeOptions, sandboxHook, sandboxOf, type BasicAuth } from '../../basic-auth.js';
import type { HttpDeps } from '../../deps.js';
import { pageOf } from '../../query.js';
import type { LargeAnswers } from '../../large-answers.js';
import { rawBody, STREAM_RAW_BYTES } from '../../mail-answers.js';
import { jobOf } from '../../presenters.js';

export const MAILHOG_REALM = 'mailhog';
/** MailHog's default page. */
const DEFAULT_LIMIT = 50;
/** Messages per page at most (a larger limit is taken as this): each carries its whole message, twice. */
export const MAX_MAILHOG_LIMIT = 250;
/** Longest search query taken (characters). */
const MAX_QUERY_CHARS = 1024;

type Query = Record<string, unknown>;

/** MailHog's search (kind from, to or containing) as our parsed search. */
export function mailhogSearch(kind: unknown, query: unknown): ParsedSearch {
  if (typeof query !== 'string' || query.trim() === '') throw badRequest('Give query, the text to search for.');
  if (query.length > MAX_QUERY_CHARS) throw badRequest(`query has more than ${MAX_QUERY_CHARS} characters.`);
  const value = query.trim().toLowerCase();
  switch (kind) {
    case 'from':
    case 'to':
      return { terms: [{ kind, value, negated: false }] };
    case 'containing': {
      // Words the mail contains: the query's quotes, field names and minus signs are its text, not syntax.
      const parsed = parseSearchQuery(value.replace(/["]/g, ' ').replace(/:/g, ' ').replace(/(^|\s)-+/g, '$1'));
      if (!parsed.ok) throw badRequest(parsed.reason);
      if (parsed.search.terms.length === 0) throw badRequest('query has no letters or digits to search for.');
      return parsed.search;
    }
    default:
      throw badRequest('kind must be from, to or containing.');
  }
}

/** A page's JSON, written one message at a time (a message gone meanwhile is left out of it); v1's is a bare array. */
function pageStream(mail: MailService, sandbox: Sandbox, page: { results: MailSummary[]; count: number }, start: number, bare = false): Readable {
  async function* parts(): AsyncGenerator<Buffer> {
    yield Buffer.from(bare ? '[' : pageHead({ total: page.count, count: page.results.length, start }));
    let first = true;
    for (const summary of page.results) {
      let record;
      try {
        record = await mail.getMail(sandbox.addressId, summary.uuid);
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') continue;
        throw err;
      }
      yield Buffer.concat([Buffer.from(first ? '' : ','), await messageJson(jobOf(summary), record.raw)]);
      first = false;
    }
    yield Buffer.from(bare ? ']' : PAGE_TAIL);
  }
  return Readable.from(parts());
}

export const mailhogRoutes: FastifyPluginAsync<{ deps: HttpDeps; sandboxes: SandboxService; auth: BasicAuth; answers: LargeAnswers }> = async (fastify, { deps, auth, answers }) => {
  const { mail, store } = deps;
  const opts = routeOptions('MAILHOG', sandboxHook(auth, MAILHOG_REALM));
  const json = 'application/json; charset=utf-8';
  // A page carries each message whole (twice): counted as a large answer by their sizes when they are large.
  const admitPage = (request: FastifyRequest, reply: FastifyReply, mails: MailSummary[]) => {
    const bytes = mails.reduce((sum, m) => sum + (JSON.parse(m.metadata) as MailMetadata).size, 0);
    if (bytes > STREAM_RAW_BYTES) answers.admit(request, reply, bytes);
  };

  fastify.get(within(mounts.mailhog, routes.mailhogMessagesV2), answering(opts, MailhogMessagesResponse), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const { start, limit } = pageOf(request, DEFAULT_LIMIT, MAX_MAILHOG_LIMIT);
    const page = await mail.listMails(sandbox.addressId, limit, start);
    admitPage(request, reply, page.results);
    return reply.type(json).header('cache-control', 'no-store').send(pageStream(mail, sandbox, page, start));
  });

  fastify.get(within(mounts.mailhog, routes.mailhogSearch), answering(opts, MailhogMessagesResponse), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const query = request.query as Query;
    const search = mailhogSearch(query['kind'], query['query']);
    const { start, limit } = pageOf(request, DEFAULT_LIMIT, MAX_MAILHOG_LIMIT);
    const page = await store.searchMails(sandbox.addressId, search, limit, start);
    admitPage(request, reply, page.results);
    return reply.type(json).header('cache-control', 'no-store').send(pageStream(mail, sandbox, page, start));
  });

  // v1's list: every message in MailHog, here the newest MAX_MAILHOG_LIMIT.
  fastify.get(within(mounts.mailhog, routes.mailhogMessages), answering(opts, MailhogMessageList), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const page = await mail.listMails(sandbox.addressId, MAX_MAILHOG_LIMIT, 0);
    admitPage(request, reply, page.results);
    return reply.type(json).header('cache-control', 'no-store').send(pageStream(mail, sandbox, page, 0, true));
  });

  fastify.get<{ Params: { id: string } }>(within(mounts.mailhog, routes.mailhogMessageDownload), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const m = await mail.openMail(sandbox.addressId, request.params.id);
    const body = await rawBody(request, reply, answers, m);
    return reply
      .type('message/rfc822')
      .header('content-disposition', `attachment; filename="${m.uuid}.eml"`)
      .header('cache-control', 'private, no-store')
      .send(body);
  });

  fastify.get<{ Params: { id: string } }>(within(mounts.mailhog, routes.mailhogMessage), answering(opts, MailhogMessage), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const record = await mail.getMail(sandbox.addressId, request.params.id);
    return reply.type(json).header('cache-control', 'no-store').send(await messageJson(jobOf(record), record.raw));
  });

  fastify.delete(within(mounts.mailhog, routes.mailhogMessages), opts, async (request, reply) => {
    await mail.clearInbox(sandboxOf(request).addressId);
    return reply.code(200).send();
  });

  fastify.delete<{ Params: { id: string } }>(within(mounts.mailhog, routes.mailhogMessage), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    await mail.deleteMail(sandbox.addressId, request.params.id).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'not_found' ? notFound('No such message.') : err;
    });
    return reply.code(200).send();
  });

  // Jim, MailHog's chaos monkey, is off here (GET answers 404, as MailHog's does with Jim off);
  // a sandbox's failures are Mailpit's chaos (PUT /mailpit/api/v1/chaos). Turning it off is a no-op.
  fastify.get(within(mounts.mailhog, routes.mailhogJim), opts, async () => {
    throw notFound('Jim is not enabled: use the sandbox\'s chaos triggers (PUT /mailpit/api/v1/chaos).');
  });
  fastify.post(within(mounts.mailhog, routes.mailhogJim), opts, async () => {
    throw new AppError('bad_request', 'Jim is not available on this server: use the sandbox\'s chaos triggers (PUT /mailpit/api/v1/chaos).');
  });
  fastify.delete(within(mounts.mailhog, routes.mailhogJim), opts, async (_request, reply) => reply.code(200).send());

  fastify.post<{ Params: { id: string } }>(within(mounts.mailhog, routes.mailhogMessageRelease), opts, async () => {
    throw new AppError('forbidden', 'Releasing is not available: a sandbox keeps its mail and never relays it.');
  });
};
