// /api/admin/*: the operators' admin (docs/api.md "Admin", docs/decisions.md "Admin").
// Registered only when ADMIN_TOKEN is set, so without it every path is the usual
// plain-text 404. A wrong token counts under RATE_LIMIT_ADMIN (the right one never
// does, so guesses from an address the operator shares cannot lock the operator out),
// and every request that passes the check is one action with one log line: what, with
// which ids, by whom (the token's holder), and the status it ended with.
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  AdminAddressesQuery,
  AdminAddressesResponse,
  AdminIdParams,
  AdminMailParams,
  AdminNewAddressBody,
  AdminStats,
  Block,
  BlocksResponse,
  FullMail,
  MailsQuery,
  MailsResponse,
  MAX_ADMIN_QUERY_CHARS,
  NewAddressResponse,
  NewBlockBody,
  routes,
  SuccessResponse,
} from '@temp-inbox/api';
import type { AdminService } from '../../admin/service.js';
import type { BlockRecord } from '../../storage/store.js';
import { AppError, badRequest, unauthorized } from '../../domain/errors.js';
import { createAdminAuth } from '../admin-auth.js';
import type { HttpDeps } from '../deps.js';
import { errorResponse } from '../errors.js';
import { boundedStrings, strictIntegers } from '../query.js';
import { redactUrl } from '../request-logger.js';
import { rawToString, toItem } from '../presenters.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id: a positive whole number, else a 400 (docs/decisions.md "Admin"). */
function idOf(raw: string, what: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw badRequest(`Invalid ${what} id: a positive whole number.`);
  return id;
}

function uuidOf(raw: string): string {
  if (!UUID_RE.test(raw)) throw badRequest('Invalid mail uuid.');
  return raw.toLowerCase();
}

const iso = (ms: number) => new Date(ms).toISOString();
const toBlock = (b: BlockRecord) => ({ id: b.id, kind: b.kind, value: b.value, note: b.note, created_at: iso(b.createdAt) });

const tags = ['admin'];
// The admin routes stay out of the public OpenAPI document; docs/api.md describes them.
const hide = true;
const unauthorizedResponse = errorResponse('Missing or wrong admin token.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');
const badInput = (what: string) => errorResponse(what);

export const adminRoutes: FastifyPluginAsync<{ deps: HttpDeps; admin: AdminService; token: string }> = async (fastify, { deps, admin, token }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const auth = createAdminAuth(token, deps.sessionSecret);
  const { logger } = deps;

  /** The action each authenticated request performs, logged once when its answer is sent. */
  const actions = new WeakMap<FastifyRequest, Record<string, unknown>>();
  const act = (request: FastifyRequest, action: string, details: Record<string, unknown> = {}): Record<string, unknown> => {
    const entry: Record<string, unknown> = { adminAction: action, ...details };
    actions.set(request, entry);
    return entry;
  };
  app.addHook('onResponse', async (request, reply) => {
    const entry = actions.get(request);
    if (entry) logger.info({ reqId: request.id, by: auth.holder, ip: request.ip, status: reply.statusCode, ...entry }, 'admin action');
  });

  // The token is checked first (in constant time) and only a wrong one is counted:
  // past RATE_LIMIT_ADMIN a client's wrong guesses are 429, while the right token
  // always works, from whatever address.
  const requireAdmin: onRequestAsyncHookHandler = async (request) => {
    if (auth.verify(request.headers.authorization)) return;
    const decision = deps.limiter.limits('ADMIN') ? await deps.limiter.consume('ADMIN', request.ip) : { allowed: true, retryAfter: 0 };
    logger.warn({ reqId: request.id, ip: request.ip, url: redactUrl(request.url), limited: !decision.allowed }, 'admin token refused');
    if (!decision.allowed) throw new AppError('rate_limited', 'Too many requests; slow down and retry later.', decision.retryAfter);
    throw unauthorized('Send "Authorization: Bearer <ADMIN_TOKEN>".');
  };
  const route = { onRequest: requireAdmin };

  // POST without a body is the same as {} (a random address).
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {};
  });

  app.get(
    routes.adminAddresses,
    {
      ...route,
      preValidation: [strictIntegers('limit', 'offset'), boundedStrings(MAX_ADMIN_QUERY_CHARS, 'q')],
      schema: {
        hide,
        tags,
        summary: 'Addresses with their mail count and last activity, newest first',
        querystring: AdminAddressesQuery,
        response: {
          200: AdminAddressesResponse,
          400: badInput(`limit (1..100) and offset (>= 0) are required integers; q is at most ${MAX_ADMIN_QUERY_CHARS} characters.`),
          401: unauthorizedResponse,
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const { q = '', limit, offset } = request.query;
      act(request, 'addresses.list', { q, limit, offset });
      const page = await admin.listAddresses(q, limit, offset);
      return {
        results: page.results.map((a) => ({
          id: a.id,
          address: a.address,
          created_at: iso(a.createdAt),
          unclaimed: a.unclaimed,
          mails: a.mails,
          bytes: a.bytes,
          last_activity: iso(a.lastMailAt ?? a.createdAt),
        })),
        count: page.count,
      };
    },
  );

  app.post(
    routes.adminAddresses,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Create an address and get its token',
        body: AdminNewAddressBody,
        response: {
          200: NewAddressResponse,
          400: badInput('Invalid or reserved name, or unknown domain.'),
          401: unauthorizedResponse,
          403: errorResponse('Custom names are disabled on this server.'),
          409: errorResponse('The name is taken by a live address.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      // The token is the answer; it is never logged.
      const entry = act(request, 'address.create', { name: request.body.name, domain: request.body.domain });
      const created = await admin.createAddress(request.body);
      Object.assign(entry, { addressId: created.address.id, address: created.address.address });
      return { address: created.address.address, jwt: created.jwt };
    },
  );

  app.delete(
    routes.adminAddress,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Delete an address with all its mail',
        params: AdminIdParams,
        response: { 200: SuccessResponse, 400: badInput('Malformed id.'), 401: unauthorizedResponse, 404: errorResponse('No such address.'), 429: rateLimited },
      },
    },
    async (request) => {
      const entry = act(request, 'address.delete', { addressId: request.params.id });
      const deleted = await admin.deleteAddress(idOf(request.params.id, 'address'));
      entry['address'] = deleted.address;
      return { success: true };
    },
  );

  app.get(
    routes.adminAddressMails,
    {
      ...route,
      preValidation: strictIntegers('limit', 'offset'),
      schema: {
        hide,
        tags,
        summary: "An address's live mail, newest first",
        params: AdminIdParams,
        querystring: MailsQuery,
        response: {
          200: MailsResponse,
          400: badInput('Malformed id, or limit (1..100) and offset (>= 0) missing.'),
          401: unauthorizedResponse,
          404: errorResponse('No such address.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const entry = act(request, 'mails.list', { addressId: request.params.id, limit, offset });
      const { address, page } = await admin.listMails(idOf(request.params.id, 'address'), limit, offset);
      entry['address'] = address.address;
      return { results: page.results.map(toItem), count: page.count };
    },
  );

  app.get(
    routes.adminAddressMail,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Read one mail of an address: metadata and raw message',
        params: AdminMailParams,
        response: { 200: FullMail, 400: badInput('Malformed id or uuid.'), 401: unauthorizedResponse, 404: errorResponse('No such mail.'), 429: rateLimited },
      },
    },
    async (request) => {
      const entry = act(request, 'mail.read', { addressId: request.params.id, uuid: request.params.uuid });
      const m = await admin.getMail(idOf(request.params.id, 'address'), uuidOf(request.params.uuid));
      entry['address'] = m.address;
      return { ...toItem(m), raw: rawToString(m.raw) };
    },
  );

  app.get(
    routes.adminBlocks,
    {
      ...route,
      schema: { hide, tags, summary: 'Every block, newest first', response: { 200: BlocksResponse, 401: unauthorizedResponse, 429: rateLimited } },
    },
    async (request) => {
      act(request, 'blocks.list');
      const blocks = await admin.listBlocks();
      return { results: blocks.map(toBlock), count: blocks.length };
    },
  );

  app.post(
    routes.adminBlocks,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Block a sender, a sender domain or a client IP or range at SMTP MAIL FROM (550 5.7.1)',
        body: NewBlockBody,
        response: {
          200: Block,
          400: badInput('Unknown kind, or a value that is not a sender address, a domain, or an IP address or CIDR range.'),
          401: unauthorizedResponse,
          409: errorResponse('Blocked already, or too many blocks.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const entry = act(request, 'block.add', { kind: request.body.kind, value: request.body.value });
      const block = await admin.addBlock(request.body);
      Object.assign(entry, { blockId: block.id, value: block.value });
      return toBlock(block);
    },
  );

  app.delete(
    routes.adminBlock,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Remove a block',
        params: AdminIdParams,
        response: { 200: SuccessResponse, 400: badInput('Malformed id.'), 401: unauthorizedResponse, 404: errorResponse('No such block.'), 429: rateLimited },
      },
    },
    async (request) => {
      act(request, 'block.remove', { blockId: request.params.id });
      await admin.removeBlock(idOf(request.params.id, 'block'));
      return { success: true };
    },
  );

  app.get(
    routes.adminStats,
    {
      ...route,
      schema: { hide, tags, summary: 'Mails per day (30 days), top senders, storage used', response: { 200: AdminStats, 401: unauthorizedResponse, 429: rateLimited } },
    },
    async (request) => {
      act(request, 'stats.read');
      const s = await admin.stats();
      return {
        mails_per_day: s.mailsPerDay,
        top_senders: s.topSenders,
        storage: { addresses: s.storage.addresses, mails: s.storage.mails, mail_bytes: s.storage.mailBytes, database_bytes: s.storage.databaseBytes },
      };
    },
  );
};
