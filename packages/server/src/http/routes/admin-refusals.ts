// GET /api/admin/refusals: the SMTP refusals of the last hours by hour, reason and recipient
// domain, and their totals per reason (docs/api.md "Admin", docs/operating.md "Abuse
// controls"); registered by admin.ts behind the admin token's check, logged like every admin action.
import { AdminRefusalsQuery, AdminRefusalsResponse, routes } from '@temp-inbox/api';
import { MAX_REFUSAL_HOURS } from '../../admin/refusals.js';
import { badRequest } from '../../domain/errors.js';
import { type AdminRouteOptions, badInput, hide, iso, rateLimited, tags, unauthorizedResponse } from './admin-options.js';
import type { RouteApp } from './route-app.js';

const DEFAULT_HOURS = 24;
const HOURS_RULE = `hours is a whole number from 1 to ${MAX_REFUSAL_HOURS} (31 days).`;

/** ?hours= as given: a whole number 1..MAX_REFUSAL_HOURS, else a 400. */
function hoursOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_HOURS;
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_REFUSAL_HOURS)) throw badRequest(`Invalid hours: ${HOURS_RULE}`);
  return n;
}

export function adminRefusalRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
  app.get(
    routes.adminRefusals,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'SMTP refusals by hour, reason and recipient domain, with totals per reason',
        querystring: AdminRefusalsQuery,
        response: { 200: AdminRefusalsResponse, 400: badInput(HOURS_RULE), 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const hours = hoursOf(request.query.hours);
      act(request, 'refusals.read', { hours });
      const r = await admin.refusals(hours);
      return {
        from: iso(r.from),
        to: iso(r.to),
        hours: r.hours.map((h) => ({ hour: iso(h.hour), reason: h.reason, recipientDomain: h.recipientDomain === '' ? null : h.recipientDomain, count: h.count })),
        totals: r.totals,
      };
    },
  );
}
