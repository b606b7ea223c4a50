// DELETE /api/admin/tombstones: the operators free retired names (docs/decisions.md "Deleted
// address"): one address's tombstone, or every one (registered by admin.ts behind the admin
// token's check, logged like every admin action).
import { Type } from '@sinclair/typebox';
import { type AdminRouteOptions, badInput, hide, rateLimited, tags, unauthorizedResponse } from './admin-options.js';
import type { RouteApp } from './route-app.js';

/** The route's path (in @temp-inbox/api's table as routes.adminTombstones). */
export const ADMIN_TOMBSTONES_PATH = '/api/admin/tombstones';

const TombstonesQuery = Type.Object(
  { address: Type.Optional(Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'Only the tombstone of this address (name@domain); omitted: every tombstone.' })) },
  { additionalProperties: false },
);

const PurgedResponse = Type.Object({ success: Type.Boolean(), purged: Type.Integer({ description: 'Tombstones removed.' }) });

export function adminTombstoneRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
  app.delete(
    ADMIN_TOMBSTONES_PATH,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: "Free retired names: remove one address's tombstone, or every tombstone",
        querystring: TombstonesQuery,
        response: { 200: PurgedResponse, 400: badInput('address is name@domain, at most 254 characters; nothing else is taken.'), 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const { address } = request.query;
      // The address is the operator's own input, logged as the action's subject (a tombstone never holds it).
      const entry = act(request, 'tombstones.purge', address === undefined ? { all: true } : { address });
      const purged = await admin.purgeTombstones(address);
      entry['purged'] = purged;
      return { success: true, purged };
    },
  );
}
