// The message lists of the Mailpit-compatible API: GET /api/v1/messages and /api/v1/search
// (newest first, start/limit paging, Mailpit's list envelope), PUT /api/v1/messages (read
// status of IDs, of a search's matches, or of all), DELETE /api/v1/messages (IDs, or all)
// and DELETE /api/v1/search (a search's matches). A sandbox's mail only: an ID of any other
// mail is not found.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { MailpitMessagesResponse, mounts, routes, within } from '@temp-inbox/api';
import { badRequest } from '../../../domain/errors.js';
import { listItem, messageList } from '../../../mailpit/shapes.js';
import { mailpitSearch, unreadOf } from '../../../mailpit/search.js';
import type { ParsedSearch } from '../../../storage/search-query.js';
import type { Sandbox } from '../../../sandboxes/types.js';
import type { MailpitRouteOptions } from './options.js';
import { answering, routeOptions, sandboxOf, sendJson, sendOk } from './respond.js';
import { withTags } from '../../presenters.js';
import { pageOf } from '../../query.js';

/** Mailpit's default page. */
const DEFAULT_LIMIT = 50;
/** Messages per page at most (a larger limit is taken as this). */
export const MAX_LIMIT = 1000;
/** IDs one request may name at most. */
export const MAX_IDS = 1000;
/** Mails a change of a search's matches (read status, deletion) reaches at most per request. */
export const MAX_SEARCH_CHANGES = 10_000;

type Query = Record<string, unknown>;

function stringParam(query: Query, key: string): string | undefined {
  const v = query[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`Give ${key} once.`);
  return v;
}

const searchOf = (request: FastifyRequest): ParsedSearch => {
  const query = request.query as Query;
  return mailpitSearch(stringParam(query, 'query') ?? '', stringParam(query, 'tz'));
};

/** The IDs of a JSON body's `IDs` (absent: none), bounded. */
export function idsOf(body: unknown): string[] {
  if (body === undefined || body === null) return [];
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const ids = (body as Record<string, unknown>)['IDs'];
  if (ids === undefined || ids === null) return [];
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || id.length > 200)) throw badRequest('IDs must be an array of message IDs.');
  if (ids.length > MAX_IDS) throw badRequest(`At most ${MAX_IDS} IDs per request.`);
  return ids as string[];
}

export const messageListRoutes: FastifyPluginAsync<MailpitRouteOptions> = async (fastify, { deps, hook }) => {
  const { mail, store } = deps;
  const opts = routeOptions('MAILPIT', hook);

  async function counts(sandbox: Sandbox) {
    const [unread, tags] = await Promise.all([store.searchMails(sandbox.addressId, unreadOf(), 1, 0), store.listTags(sandbox.addressId)]);
    return { unread: unread.count, tags: tags.map((t) => t.tag) };
  }

  /** The uuids of every match of a search, newest first, up to MAX_SEARCH_CHANGES. */
  async function matches(sandbox: Sandbox, search: ParsedSearch): Promise<string[]> {
    const found = await store.searchMails(sandbox.addressId, search, MAX_SEARCH_CHANGES, 0);
    return found.results.map((m) => m.uuid);
  }

  fastify.get(within(mounts.mailpit, routes.mailpitMessages), answering(opts, MailpitMessagesResponse), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const { start, limit } = pageOf(request, DEFAULT_LIMIT, MAX_LIMIT);
    const [page, c] = await Promise.all([mail.listMails(sandbox.addressId, limit, start), counts(sandbox)]);
    const messages = (await withTags(store, sandbox, page.results)).map(listItem);
    return sendJson(reply, messageList({ total: page.count, unread: c.unread, matched: page.count, matchedUnread: c.unread, start, tags: c.tags, messages }));
  });

  fastify.get(within(mounts.mailpit, routes.mailpitSearch), answering(opts, MailpitMessagesResponse), async (request, reply) => {
    const sandbox = sandboxOf(request);
    const search = searchOf(request);
    const { start, limit } = pageOf(request, DEFAULT_LIMIT, MAX_LIMIT);
    const [found, matchedUnread, all, c] = await Promise.all([
      store.searchMails(sandbox.addressId, search, limit, start),
      store.searchMails(sandbox.addressId, unreadOf(search), 1, 0),
      mail.listMails(sandbox.addressId, 1, 0),
      counts(sandbox),
    ]);
    const messages = (await withTags(store, sandbox, found.results)).map(listItem);
    return sendJson(reply, messageList({ total: all.count, unread: c.unread, matched: found.count, matchedUnread: matchedUnread.count, start, tags: c.tags, messages }));
  });

  // Read status: of the IDs given, of a search's matches, or (neither) of every message.
  fastify.put(within(mounts.mailpit, routes.mailpitMessages), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const ids = idsOf(request.body);
    const read = body['Read'] ?? false;
    if (typeof read !== 'boolean') throw badRequest('Read must be true or false.');
    const search = body['Search'] ?? '';
    if (typeof search !== 'string') throw badRequest('Search must be a string.');
    if (ids.length > 0 && search !== '') throw badRequest('You may specify either IDs or a search query, not both');
    let targets = ids;
    if (search !== '') targets = await matches(sandbox, mailpitSearch(search, stringParam(request.query as Query, 'tz')));
    else if (ids.length === 0) targets = await matches(sandbox, read ? unreadOf() : { terms: [{ kind: 'read', negated: false }] });
    for (const uuid of targets) await mail.setSeen(sandbox.addressId, uuid, read).catch(ignoreNotFound);
    return sendOk(reply);
  });

  fastify.delete(within(mounts.mailpit, routes.mailpitMessages), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const ids = idsOf(request.body);
    if (ids.length === 0) await mail.clearInbox(sandbox.addressId);
    else for (const uuid of ids) await mail.deleteMail(sandbox.addressId, uuid).catch(ignoreNotFound);
    return sendOk(reply);
  });

  fastify.delete(within(mounts.mailpit, routes.mailpitSearch), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    for (const uuid of await matches(sandbox, searchOf(request))) await mail.deleteMail(sandbox.addressId, uuid).catch(ignoreNotFound);
    return sendOk(reply);
  });
};

/** A mail named by ID that is gone (or was never the sandbox's) is passed over, as Mailpit does. */
function ignoreNotFound(err: unknown): void {
  if (err instanceof Error && 'code' in err && (err as { code: unknown }).code === 'not_found') return;
  throw err;
}
