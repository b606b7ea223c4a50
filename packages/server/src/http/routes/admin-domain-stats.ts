// GET /api/admin/domains/stats: the per-domain figures of the operator's view (registered
// by admin.ts behind the admin token's check, logged like every admin action).
import { DomainStatsQuery, DomainStatsResponse, routes } from '@temp-inbox/api';
import { MAX_STATS_DAYS } from '../../admin/domain-stats.js';
import { badRequest } from '../../domain/errors.js';
import { type AdminRouteOptions, badInput, hide, rateLimited, tags, unauthorizedResponse } from './admin-options.js';
import type { RouteApp } from './route-app.js';

/** The window asked for: 1..MAX_STATS_DAYS whole days, 7 when absent. */
export function statsDays(raw: string | undefined): number {
  if (raw === undefined) return 7;
  const days = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(days >= 1 && days <= MAX_STATS_DAYS)) throw badRequest(`days is a whole number of days from 1 to ${MAX_STATS_DAYS}.`);
  return days;
}

export function adminDomainStatsRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
  app.get(
    routes.adminDomainStats,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Per domain: addresses, mails of the last day and of the window, the share refused and the top sending domains',
        querystring: DomainStatsQuery,
        response: { 200: DomainStatsResponse, 400: badInput(`days is not a whole number from 1 to ${MAX_STATS_DAYS}.`), 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const days = statsDays(request.query.days);
      act(request, 'domains.stats', { days });
      return { days, domains: await admin.domainStats(days) };
    },
  );
}
