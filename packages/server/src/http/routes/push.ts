// Push instead of polling (docs/decisions.md "Beyond the interface"):
// - GET /api/events: a Server-Sent Events stream of one address's mail events;
// - GET /api/mails/wait: a long poll that answers as soon as the address has mail
//   newer than `since`, or 204 when `timeout` passes first.
// Both hear of mail committed on any node (mail/events/events.ts) and never replace
// GET /api/mails, which stays the source of truth. Both take the filters `from`, `to`
// and `subject` (mail/events/filter.ts): other mail neither answers a wait nor is streamed.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EventsQuery, MailsResponse, MAX_FILTER_CHARS, routes, WaitQuery } from '@temp-inbox/api';
import { unauthorized } from '../../domain/errors.js';
import type { InboxEvent } from '../../mail/events/events.js';
import { mailFilter, type MailFilter } from '../../mail/events/filter.js';
import type { MailSummary } from '../../storage/store.js';
import type { HttpDeps } from '../deps.js';
import { authenticate, credentialOf } from '../auth.js';
import { errorResponse } from '../errors.js';
import { openEventStream, RECONNECT_MS } from '../event-stream.js';
import { boundedStrings, strictIntegers } from '../query.js';
import type { StreamAdmission } from '../stream-admission.js';
import { toItem } from '../presenters.js';

/** Mails replayed or answered at most (the newest ones). */
const NEWER_MAX = 100;

const bearer = [{ bearer: [] }];
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
const tooMany = errorResponse('Rate limit exceeded, or too many streams and waits open from this client; see Retry-After.');
const badQuery = errorResponse(`since and timeout must be whole numbers in range; from, to and subject at most ${MAX_FILTER_CHARS} characters, each given once.`);
const filters = boundedStrings(MAX_FILTER_CHARS, 'from', 'to', 'subject');

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

export const pushRoutes: FastifyPluginAsync<{ deps: HttpDeps; streams: StreamAdmission }> = async (fastify, opts) => {
  const { deps } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail, bus } = deps;
  const heartbeatMs = deps.config.events.heartbeatMs;

  // What is open, per client, per address and in all (EVENTS_PER_*), shared with the mail.tm
  // API's Mercure stream; everything open is ended when the server closes.
  const { streams } = opts;
  fastify.addHook('preClose', async () => streams.close());

  /** The address's live mails with an id above `since` that `match` accepts (among the newest NEWER_MAX), and its count of live mails. */
  async function newer(addressId: number, since: number, match: MailFilter | undefined): Promise<{ results: MailSummary[]; count: number }> {
    const page = await mail.listMails(addressId, NEWER_MAX, 0);
    return { results: page.results.filter((m) => m.id > since && (!match || match(m))), count: page.count };
  }

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
          const replay = (await newer(address.id, since!, match)).results.reverse();
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

  app.get(
    routes.waitMails,
    {
      config: { rateLimit: 'MAILS' },
      preValidation: [strictIntegers('since', 'timeout'), filters],
      schema: {
        summary: 'Wait for mail newer than `since` (long poll)',
        description: [
          'Answers as soon as the address has live mail whose `id` is greater than `since`: 200 with those mails (newest first, at most',
          '100) and the total `count`, like GET /api/mails. When `timeout` seconds pass first: 204 with no body. Pass the largest `id`',
          'seen so far as `since` to wait for the next one. With `from`, `to` or `subject` (case-insensitive substrings of the From: name',
          'or address, of a To: name or address, of the subject), only matching mail answers, and only it is in `results`. Counted under',
          'RATE_LIMIT_MAILS.',
        ].join(' '),
        tags: ['mail'],
        security: bearer,
        querystring: WaitQuery,
        response: {
          200: MailsResponse,
          204: { description: 'No such mail arrived within `timeout`.', type: 'null' },
          400: badQuery,
          401: unauthorizedResponse,
          429: tooMany,
          503: errorResponse('Too many waits open on this server, or it is shutting down; see Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const address = await authenticate(request, mail);
      const since = request.query.since ?? 0;
      const timeoutMs = (request.query.timeout ?? 30) * 1000;
      const match = mailFilter(request.query);
      reply.header('cache-control', 'no-store');
      const release = streams.admit(request, address.id, 'wait');
      let page: { results: MailSummary[]; count: number } | undefined;
      try {
        // Why the wait ended: a newer mail, the address deleted, or nothing (timeout,
        // shutdown, the client gone).
        const outcome = await new Promise<'mail' | 'gone' | 'none'>((resolve, reject) => {
          let settled = false;
          const finish = (why: 'mail' | 'gone' | 'none') => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            unsubscribe();
            unregister();
            reply.raw.off('close', stop);
            resolve(why);
          };
          const stop = () => finish('none');
          // Subscribed before the first look, so a mail committed in between is not missed.
          const unsubscribe = bus.subscribe(address.id, (event) => {
            if (event.type === 'mail' && event.mail.id > since && (!match || match(event.mail))) finish('mail');
            else if (event.type === 'address_deleted') finish('gone');
          });
          const timer = setTimeout(stop, timeoutMs);
          const unregister = streams.onClose(stop);
          reply.raw.on('close', stop);
          newer(address.id, since, match).then(
            (found) => {
              if (found.results.length === 0 || settled) return;
              page = found;
              finish('mail');
            },
            (err: unknown) => {
              if (settled) return;
              finish('none');
              reject(err);
            },
          );
        });
        if (outcome === 'gone') throw unauthorized('This address was deleted.');
        if (outcome === 'mail' && !page) page = await newer(address.id, since, match);
      } finally {
        release();
      }
      if (!page || page.results.length === 0) return reply.code(204).send();
      return { results: page.results.map(toItem), count: page.count };
    },
  );
};
