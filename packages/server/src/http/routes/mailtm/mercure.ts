// The mail.tm-compatible API's event stream: a Mercure hub's subscription
// (GET /.well-known/mercure?topic=/accounts/{id}), as mail.tm's clients open it with the
// account's token. Server-Sent Events whose data is the changed resource in JSON-LD: a
// Message when one arrives, is marked read or unread, or is deleted (isDeleted: true),
// and the Account (isDeleted: true) when the address is deleted, which ends the stream.
// Built on the event bus (mail/events/events.ts) like GET /api/events, counted against the same
// caps (stream-admission.ts), checked again at each EVENTS_HEARTBEAT.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { mounts, routes, within } from '@temp-inbox/api';
import { AppError } from '../../../domain/errors.js';
import { openEventStream, RECONNECT_MS } from '../../event-stream.js';
import type { InboxEvent } from '../../../mail/events/events.js';
import { accountIri, messageItem, messageIri, resource, timestamp } from '../../../mailtm/shapes.js';
import type { MailtmRouteOptions } from './options.js';
import { stored } from '../../presenters.js';
import { accountOf, bearerOf } from './respond.js';

/** Topics one subscription may name. */
const MAX_TOPICS = 10;

export const mercureRoutes: FastifyPluginAsync<MailtmRouteOptions> = async (fastify, { deps, mailtm, streams }) => {
  const { mail, bus } = deps;
  const heartbeatMs = deps.config.events.heartbeatMs;

  fastify.get(within(mounts.mailtm, routes.mailtmMercure), { schema: { hide: true }, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const query = request.query as Record<string, string | string[] | undefined>;
    const topics = ([] as string[]).concat(query['topic'] ?? []);
    if (topics.length === 0) throw new AppError('bad_request', 'Missing "topic" parameter.');
    if (topics.length > MAX_TOPICS || topics.some((t) => t.length > 512)) throw new AppError('bad_request', 'Too many or too long "topic" parameters.');
    // The account's token in the Authorization header, as mail.tm's clients send it. Not in
    // the URL (Mercure's `authorization` parameter): URLs end up in access logs.
    const token = bearerOf(request);
    const address = await accountOf(token, mail);
    const accountId = mailtm.accountId(address);
    // Updates of one account only: its topic, as an IRI relative to the API or absolute.
    const own = accountIri(accountId);
    if (!topics.some((t) => t === own || t.endsWith(`/mailtm${own}`))) throw new AppError('forbidden', 'Access Denied.');

    const stream = openEventStream({ request, reply, streams, address, heartbeatMs, heartbeat: ':\n\n', stillAllowed: () => mail.authenticate(token!) });
    const update = (body: Record<string, unknown>) => stream.write(`id: urn:uuid:${randomUUID()}\ndata: ${JSON.stringify(body)}\n\n`);
    const onEvent = (event: InboxEvent) => {
      switch (event.type) {
        case 'mail':
        case 'mail_seen':
          update(resource('jsonld', 'Message', messageIri(event.mail.uuid), messageItem(stored(event.mail), accountId)));
          break;
        case 'mail_deleted':
          // The mail is gone: what is known of it.
          update(resource('jsonld', 'Message', messageIri(event.uuid), { id: event.uuid, accountId: own, isDeleted: true }));
          break;
        case 'address_deleted':
          update(
            resource('jsonld', 'Account', own, {
              id: accountId,
              address: address.address,
              isDisabled: false,
              isDeleted: true,
              createdAt: timestamp(address.createdAt),
              updatedAt: timestamp(Date.now()),
            }),
          );
          stream.end();
          break;
        default:
          // Clearing the inbox has no mail.tm counterpart; a client's next list shows it.
          break;
      }
    };
    stream.onEnd(bus.subscribe(address.id, onEvent));
    // A comment first: the response (and the client's open event) goes out at once.
    stream.write(`:\nretry: ${RECONNECT_MS}\n\n`);
  });
};
