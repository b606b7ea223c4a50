// GET /api/mails/wait: a long poll that answers as soon as the address has mail newer than
// `since`, or 204 when `timeout` passes first (registered by push.ts).
import { MailsResponse, routes, WaitQuery } from '@temp-inbox/api';
import { unauthorized } from '../../domain/errors.js';
import { mailFilter } from '../../mail/events/filter.js';
import type { MailSummary } from '../../storage/store.js';
import { authenticate } from '../auth.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';
import { toItem } from '../presenters.js';
import { badQuery, bearer, filters, newer, type PushRouteOptions, tooMany, unauthorizedResponse } from './push-options.js';
import type { RouteApp } from './route-app.js';

export function waitRoutes(app: RouteApp, { deps, streams }: PushRouteOptions): void {
  const { mail, bus } = deps;

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
          newer(mail, address.id, since, match).then(
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
        if (outcome === 'mail' && !page) page = await newer(mail, address.id, since, match);
      } finally {
        release();
      }
      if (!page || page.results.length === 0) return reply.code(204).send();
      return { results: page.results.map(toItem), count: page.count };
    },
  );
}
