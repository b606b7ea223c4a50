// /api/admin/domains: the domain pool (docs/operating.md "Domains and rotation"): list, add,
// disable, retire, delete, random subdomains, and each domain's MX check (registered by
// admin.ts behind the admin token's check, logged like every admin action). Every node
// follows a change within a second (mail/domain-pool.ts).
import { AdminDomain, AdminDomainBody, AdminDomainDns, AdminDomainParams, AdminDomainPatch, AdminDomainsResponse, routes, SuccessResponse } from '@temp-inbox/api';
import type { MxCheck } from '../../admin/domain-dns.js';
import { poolDomainName } from '../../domain/domain-pool.js';
import { badRequest, notFound } from '../../domain/errors.js';
import type { DomainPool } from '../../mail/domain-pool.js';
import type { PoolDomainRecord } from '../../storage/store.js';
import { errorResponse } from '../errors.js';
import { type AdminRouteOptions, badInput, hide, iso, rateLimited, tags, unauthorizedResponse } from './admin-options.js';
import type { RouteApp } from './route-app.js';

export interface AdminDomainRouteOptions {
  pool: DomainPool;
  mxCheck: MxCheck;
}

const toDomain = (d: PoolDomainRecord): AdminDomain => ({
  domain: d.domain,
  state: d.state,
  subdomains: d.subdomains,
  addedAt: iso(d.addedAt),
  stateChangedAt: iso(d.stateChangedAt),
  retiredUntil: d.retiredUntil === null ? null : iso(d.retiredUntil),
});

const badDomain = badInput('Not a domain name (two or more labels of a-z, 0-9 and "-"), or a body field that is not taken.');
const noSuchDomain = errorResponse('The pool has no such domain.');

export function adminDomainRoutes(app: RouteApp, { route, act }: AdminRouteOptions, { pool, mxCheck }: AdminDomainRouteOptions): void {
  app.get(
    routes.adminDomains,
    { ...route, schema: { hide, tags, summary: 'The domain pool, in the order added, and the selection', response: { 200: AdminDomainsResponse, 401: unauthorizedResponse, 429: rateLimited } } },
    async (request) => {
      act(request, 'domains.list');
      return { domains: (await pool.list()).map(toDomain), selection: pool.selection };
    },
  );

  app.post(
    routes.adminDomains,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Add an active domain to the pool',
        body: AdminDomainBody,
        response: { 201: AdminDomain, 400: badDomain, 401: unauthorizedResponse, 409: errorResponse('The pool has that domain already.'), 429: rateLimited },
      },
    },
    async (request, reply) => {
      const entry = act(request, 'domain.add', { domain: request.body.domain });
      const added = await pool.add(request.body.domain, request.body.subdomains ?? false);
      entry['domain'] = added.domain;
      return reply.code(201).send(toDomain(added));
    },
  );

  app.patch(
    routes.adminDomain,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: "Change a domain's state (active, disabled, retired) or its random subdomains",
        params: AdminDomainParams,
        body: AdminDomainPatch,
        response: { 200: AdminDomain, 400: badDomain, 401: unauthorizedResponse, 404: noSuchDomain, 429: rateLimited },
      },
    },
    async (request) => {
      const domain = poolDomainName(request.params.domain);
      // An empty body changes nothing: say so rather than answer 200 as if it had.
      if (request.body.state === undefined && request.body.subdomains === undefined) throw badRequest('Nothing to change: send "state" (active, disabled or retired), "subdomains" (true or false), or both.');
      act(request, 'domain.change', { domain, ...request.body });
      return toDomain(await pool.update(domain, request.body));
    },
  );

  app.delete(
    routes.adminDomain,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Delete a domain from the pool: SMTP takes no more mail for it',
        params: AdminDomainParams,
        response: { 200: SuccessResponse, 400: badDomain, 401: unauthorizedResponse, 404: noSuchDomain, 429: rateLimited },
      },
    },
    async (request) => {
      const domain = poolDomainName(request.params.domain);
      act(request, 'domain.delete', { domain });
      await pool.remove(domain);
      return { success: true };
    },
  );

  app.get(
    routes.adminDomainDns,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: "Whether a pool domain's MX points at this service",
        params: AdminDomainParams,
        response: { 200: AdminDomainDns, 400: badDomain, 401: unauthorizedResponse, 404: noSuchDomain, 429: rateLimited },
      },
    },
    async (request) => {
      const domain = poolDomainName(request.params.domain);
      act(request, 'domain.dns', { domain });
      const entry = (await pool.list()).find((d) => d.domain === domain);
      if (!entry) throw notFound(`The pool has no domain ${domain}.`);
      return mxCheck(domain, { subdomains: entry.subdomains });
    },
  );
}
