// GET /api/events: a Server-Sent Events stream of one address's mail events, replaying the
// mails newer than `since` or Last-Event-ID first (registered by push.ts).
import { EventsQuery, routes } from '@temp-inbox/api';
import type { InboxEvent } from '../../mail/events/events.js';
import { mailFilter } from '../../mail/events/filter.js';
import { credentialOf } from '../auth.js';
import { errorResponse } from '../errors.js';
import { openEventStream, RECONNECT_MS } from '../event-stream.js';
import { strictIntegers } from '../query.js';
import { toItem } from '../presenters.js';
import { badQuery, bearer, filters, newer, type PushRouteOptions, tooMany, unauthorizedResponse } from './push-options.js';
import type { RouteApp } from './route-app.js';

/** Last-Event-ID as a mail id, when it is one. */
function lastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

function frame(event: InboxEvent): string {
  switch (event.type) {
    case 'mail':
      return `id: ${event.mail.id}\nevent: mail\ndata: ${JSON.stringify(toItem(event.mail))}\n\n`;
    case 'mail_deleted':
      return `event: mail_deleted\ndata: ${JSON.stringify({ uuid: event.uuid })}\n\n`;
    case 'mail_seen':
      return `event: mail_seen\ndata: ${JSON.stringify({ uuid: event.uuid, seen: event.seen })}\n\n`;
    default:
      return `event: ${event.type}\ndata: {}\n\n`;
  }
}

export function eventStreamRoutes(app: RouteApp, { deps, streams }: PushRouteOptions): void {
  const { mail, bus } = deps;
  const heartbeatMs = deps.config.events.heartbeatMs;

  app.get(
    routes.events,
    {
      config: { rateLimit: 'MAILS' },
      preValidation: [strictIntegers('since'), filters],
      schema: {
        summary: 'Stream the address\'s mail events (Server-Sent Events)',
        description: [
          'A `text/event-stream` that stays open. Events: `ready` (subscribed; data `{"address": …}`), `mail` (a new mail; data is the same object',
          'as an item of GET /api/mails, and the event `id` is the mail\'s `id`), `mail_deleted` (data `{"uuid": …}`), `mail_seen` (a mail marked',
          'read or unread; data `{"uuid": …, "seen": …}`), `inbox_cleared` and',
          '`address_deleted` (data `{}`; the stream then ends). A comment line is sent every EVENTS_HEARTBEAT, and the token is checked',
          'again then: the stream ends when it expires or its address is gone. With `since` or `Last-Event-ID` (sent by EventSource on',
          'reconnect), the mails with a greater `id` (at most the newest 100) are sent first, oldest first. With `from`, `to` or `subject`,',
          'only the mails that match are sent (other events are sent as always). Counted under RATE_LIMIT_MAILS.',
        ].join(' '),
        tags: ['mail'],
        security: bearer,
        querystring: EventsQuery,
        response: {
          200: { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          400: badQuery,
          401: unauthorizedResponse,
          429: tooMany,
          503: errorResponse('Too many streams open on this server, or it is shutting down; see Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const token = credentialOf(request);
      const address = await mail.authenticate(token);
      const since = request.query.since ?? lastEventId(request.headers['last-event-id']);
      const match = mailFilter(request.query);

      const stream = openEventStream({ request, reply, streams, address, heartbeatMs, heartbeat: ': keep-alive\n\n', stillAllowed: () => mail.authenticate(token) });
      // Events that arrive while the replay is read are held, then sent after it.
      let held: InboxEvent[] | undefined = since === undefined ? undefined : [];
      const deliver = (event: InboxEvent) => {
        if (event.type === 'mail' && match && !match(event.mail)) return;
        stream.write(frame(event));
        if (event.type === 'address_deleted') stream.end();
      };
      // Subscribed before anything is read or announced, so no event falls in between.
      stream.onEnd(bus.subscribe(address.id, (event) => (held ? held.push(event) : deliver(event))));
      stream.write(`retry: ${RECONNECT_MS}\nevent: ready\ndata: ${JSON.stringify({ address: address.address })}\n\n`);

      if (held) {
        try {
          const replay = (await newer(mail, address.id, since!, match)).results.reverse();
          const sent = new Set<number>();
          for (const m of replay) {
            sent.add(m.id);
            stream.write(frame({ type: 'mail', mail: m }));
          }
          const later = held;
          held = undefined;
          for (const event of later) if (!(event.type === 'mail' && sent.has(event.mail.id))) deliver(event);
        } catch (err) {
          request.log.error({ err }, 'event stream replay failed');
          stream.end();
        }
      }
    },
  );
}
