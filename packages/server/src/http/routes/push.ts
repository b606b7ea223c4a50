// Push instead of polling (docs/decisions.md "Beyond the interface"):
// - GET /api/events: a Server-Sent Events stream of one address's mail events;
// - GET /api/mails/wait: a long poll that answers as soon as the address has mail
//   newer than `since`, or 204 when `timeout` passes first.
// Both hear of mail committed on any node (mail/events/events.ts) and never replace
// GET /api/mails, which stays the source of truth. Both take the filters `from`, `to`
// and `subject` (mail/events/filter.ts): other mail neither answers a wait nor is streamed.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { eventStreamRoutes } from './push-events.js';
import type { PushRouteOptions } from './push-options.js';
import { waitRoutes } from './push-wait.js';

export const pushRoutes: FastifyPluginAsync<PushRouteOptions> = async (fastify, opts) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // What is open, per client, per address and in all (EVENTS_PER_*), shared with the mail.tm
  // API's Mercure stream; everything open is ended when the server closes.
  const { streams } = opts;
  fastify.addHook('preClose', async () => streams.close());
  eventStreamRoutes(app, opts);
  waitRoutes(app, opts);
};
