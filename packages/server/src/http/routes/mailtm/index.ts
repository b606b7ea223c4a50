// The mail.tm-compatible API under /mailtm (MAILTM_API; docs/api.md "mail.tm-compatible API"):
// clients written for mail.tm's public API work with https://<host>/mailtm as their base
// URL. Its own error handler and 404 answer in mail.tm's bodies; the routes are grouped
// in accounts.ts (domains, accounts, tokens), messages.ts and mercure.ts (events).
import type { FastifyPluginAsync } from 'fastify';
import { errorBody } from '../../../mailtm/shapes.js';
import { accountRoutes } from './accounts.js';
import { mercureRoutes } from './mercure.js';
import { messageRoutes } from './messages.js';
import type { MailtmRouteOptions } from './options.js';
import { formatOf, mailtmErrorHandler, sendJson } from './respond.js';

export const mailtmRoutes: FastifyPluginAsync<MailtmRouteOptions> = async (fastify, opts) => {
  // mail.tm's clients send JSON as application/json, PATCH as application/merge-patch+json
  // (API Platform's rule), some as application/ld+json: all parsed as JSON, safely. Many send
  // `Content-Type: application/json` on every request, a DELETE without a body included, so
  // an empty body is no body here (a route that needs one refuses it: "Syntax error").
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(['application/json', 'application/merge-patch+json', 'application/ld+json'], { parseAs: 'string' }, (request, body, done) =>
    body.length === 0 ? done(null, undefined) : json(request, body as string, done),
  );
  // Plain text is another media type here, as at mail.tm: 415, not a body read as a string.
  fastify.removeContentTypeParser('text/plain');
  fastify.setErrorHandler(mailtmErrorHandler);
  fastify.setNotFoundHandler((request, reply) => {
    const format = formatOf(request);
    return sendJson(reply, 404, format, errorBody(format, 'Not Found'));
  });
  fastify.addHook('preClose', async () => opts.streams.close());
  // Without the prefix of these options (it is this plugin's already).
  const own: MailtmRouteOptions = { deps: opts.deps, mailtm: opts.mailtm, streams: opts.streams, answers: opts.answers };
  await fastify.register(accountRoutes, own);
  await fastify.register(messageRoutes, own);
  await fastify.register(mercureRoutes, own);
};
