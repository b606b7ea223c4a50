// /api/admin/*: the operators' admin (docs/api.md "Admin", docs/decisions.md "Admin").
// Registered only when ADMIN_TOKEN is set, so without it every path is the usual
// plain-text 404. A wrong token counts under RATE_LIMIT_ADMIN (the right one never
// does, so guesses from an address the operator shares cannot lock the operator out),
// and every request that passes the check is one action with one log line: what, with
// which ids, by whom (the token's holder), and the status it ended with.
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AdminService } from '../../admin/service.js';
import { AppError, unauthorized } from '../../domain/errors.js';
import { createAdminAuth } from '../admin-auth.js';
import type { HttpDeps } from '../deps.js';
import { redactUrl } from '../request-logger.js';
import { adminAddressRoutes } from './admin-addresses.js';
import { adminBlockRoutes, adminStatsRoutes } from './admin-blocks.js';
import { adminDomainRoutes } from './admin-domains.js';
import { createMxCheck } from '../../admin/domain-dns.js';
import { adminDomainStatsRoutes } from './admin-domain-stats.js';
import type { AdminRouteOptions } from './admin-options.js';
import { adminRefusalRoutes } from './admin-refusals.js';
import { adminTombstoneRoutes } from './admin-tombstones.js';

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

  const own: AdminRouteOptions = { admin, route, act };
  adminAddressRoutes(app, own);
  adminBlockRoutes(app, own);
  adminStatsRoutes(app, own);
  adminTombstoneRoutes(app, own);
  // The MX check asks the resolvers the authentication checks ask (DNS_SERVERS).
  const { mail: mailConfig, smtp, mailAuth } = deps.config;
  const expected = mailConfig.mxHostnames.length > 0 ? mailConfig.mxHostnames : [smtp.hostname];
  adminDomainRoutes(app, own, { pool: deps.mail.domains, mxCheck: createMxCheck({ servers: mailAuth.dnsServers, expected }) });
  adminRefusalRoutes(app, own);
  adminDomainStatsRoutes(app, own);
};
