// /api/admin/blocks and /api/admin/stats: list, add and remove the blocks checked at SMTP
// MAIL FROM, and the figures of the admin's overview (registered by admin.ts behind the
// admin token's check).
import { AdminIdParams, AdminStats, Block, BlocksResponse, NewBlockBody, routes, SuccessResponse } from '@temp-inbox/api';
import type { BlockRecord } from '../../storage/store.js';
import { errorResponse } from '../errors.js';
import { type AdminRouteOptions, badInput, hide, idOf, iso, rateLimited, tags, unauthorizedResponse } from './admin-options.js';
import type { RouteApp } from './route-app.js';

const toBlock = (b: BlockRecord) => ({ id: b.id, kind: b.kind, value: b.value, note: b.note, created_at: iso(b.createdAt) });

export function adminBlockRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
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
}

export function adminStatsRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
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
}
