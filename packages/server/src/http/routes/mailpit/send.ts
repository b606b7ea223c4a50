// POST /api/v1/send of the Mailpit-compatible API: Mailpit's send request, composed into a
// message (mailpit/compose.ts) and stored in the sandbox as SMTP would store it, with its
// envelope (From, and every To, Cc and Bcc) and its Tags; nothing is sent anywhere. The body
// may be as large as a message with base64 attachments (4/3 of MAX_MESSAGE_BYTES and some
// JSON); a large one is read in a worker thread (send-job.ts), never on the event loop.
import type { FastifyPluginAsync } from 'fastify';
import { MailpitSendResponse, mounts, routes, within } from '@temp-inbox/api';
import { AppError, unsupportedMediaType } from '../../../domain/errors.js';
import { composeSend } from '../../../mailpit/send-job.js';
import type { MailpitRouteOptions } from './options.js';
import { answering, routeOptions, sandboxOf, sendJson } from './respond.js';

/** JSON around the base64 of a message of MAX_MESSAGE_BYTES. */
const JSON_ALLOWANCE = 64 * 1024;

export const sendRoutes: FastifyPluginAsync<MailpitRouteOptions> = async (fastify, { deps, sandboxes, hook }) => {
  const maxBytes = deps.config.mail.maxMessageBytes;
  // The body as bytes: read (and refused when malformed) where it is composed.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) return done(unsupportedMediaType('Content-Encoding is not supported; send the body uncompressed.'));
    done(null, body);
  });
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(unsupportedMediaType('The body must be JSON (Content-Type: application/json).')));

  fastify.post(within(mounts.mailpit, routes.mailpitSend), answering(routeOptions('MAILPIT', hook, { bodyLimit: Math.ceil((maxBytes * 4) / 3) + JSON_ALLOWANCE }), MailpitSendResponse), async (request, reply) => {
    const sandbox = sandboxOf(request);
    if (!Buffer.isBuffer(request.body) || request.body.length === 0) throw new AppError('bad_request', 'Send the message as a JSON object (Content-Type: application/json).');
    const composed = await composeSend({ maxBytes, now: Date.now(), hostname: 'mailpit.sandbox.invalid' }, request.body);
    if (composed.raw.length > maxBytes) throw new AppError('too_large', `The message would be ${composed.raw.length} bytes; at most ${maxBytes} (MAX_MESSAGE_BYTES) are taken.`);
    const uuid = await sandboxes.store(sandbox, composed.raw, composed.envelope, { remoteAddress: request.ip });
    if (composed.tags.length > 0) await deps.store.setMailTags(sandbox.addressId, [uuid], composed.tags);
    return sendJson(reply, { ID: uuid });
  });
};
