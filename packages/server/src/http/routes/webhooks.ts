// PUT, GET and DELETE /api/webhook and GET /api/webhook/deliveries (docs/api.md "Webhooks"):
// the authenticated address's own webhook only, through the webhook service.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { routes, SuccessResponse, Webhook, WebhookBody, WebhookCreated, WebhookDeliveriesQuery, WebhookDeliveriesResponse, type WebhookDelivery } from '@temp-inbox/api';
import type { WebhookAttempt, WebhookRecord } from '../../storage/store.js';
import { messageId } from '../../webhooks/payload.js';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { jsonOnly } from '../body.js';
import { errorResponse } from '../errors.js';
import { strictIntegers } from '../query.js';

const bearer = [{ bearer: [] }];
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
const noWebhook = errorResponse('The address has no webhook.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');

const iso = (ms: number) => new Date(ms).toISOString();
const toWebhook = (w: WebhookRecord): Webhook => ({ url: w.url, created_at: iso(w.createdAt) });
const toDelivery = (a: WebhookAttempt): WebhookDelivery => ({
  webhook_id: messageId(a.mailUuid),
  mail_uuid: a.mailUuid,
  url: a.url,
  attempt: a.attempt,
  at: iso(a.at),
  outcome: a.outcome,
  status: a.status,
  duration_ms: a.durationMs,
  error: a.error,
  next_attempt_at: a.nextAt === null ? null : iso(a.nextAt),
});

export const webhookRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail, webhooks } = deps;

  app.put(
    routes.webhook,
    {
      config: { rateLimit: 'WEBHOOK' },
      preValidation: jsonOnly,
      schema: {
        summary: "Set the address's webhook",
        description:
          'Every mail the address receives from now on is POSTed to `url` as JSON, signed as the Standard Webhooks specification says. ' +
          'The answer holds the signing secret, shown this once; a PUT that replaces the URL makes a new secret. ' +
          'The URL must be http(s), without user name or password, and its host must be (and resolve only to) public addresses.',
        tags: ['webhooks'],
        security: bearer,
        body: WebhookBody,
        response: {
          200: WebhookCreated,
          400: errorResponse('Malformed body, or a URL that is not http(s), too long, has credentials or a fragment, a blocked port, or a host that is or resolves to a non-public address.'),
          401: unauthorizedResponse,
          415: errorResponse('The body is not JSON.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      const webhook = await webhooks.set(address.id, request.body.url);
      return { ...toWebhook(webhook), secret: webhook.secret };
    },
  );

  app.get(
    routes.webhook,
    {
      config: { rateLimit: 'WEBHOOK' },
      schema: {
        summary: "The address's webhook (never its secret)",
        tags: ['webhooks'],
        security: bearer,
        response: { 200: Webhook, 401: unauthorizedResponse, 404: noWebhook, 429: rateLimited },
      },
    },
    async (request) => toWebhook(await webhooks.get((await authenticate(request, mail)).id)),
  );

  app.delete(
    routes.webhook,
    {
      config: { rateLimit: 'WEBHOOK' },
      schema: {
        summary: "Remove the address's webhook",
        description: 'Deliveries not yet made are dropped, and the record of attempts goes with it.',
        tags: ['webhooks'],
        security: bearer,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 404: noWebhook, 429: rateLimited },
      },
    },
    async (request) => {
      await webhooks.remove((await authenticate(request, mail)).id);
      return { success: true };
    },
  );

  app.get(
    routes.webhookDeliveries,
    {
      config: { rateLimit: 'WEBHOOK' },
      preValidation: strictIntegers('limit'),
      schema: {
        summary: "The webhook's recent delivery attempts, newest first",
        tags: ['webhooks'],
        security: bearer,
        querystring: WebhookDeliveriesQuery,
        response: { 200: WebhookDeliveriesResponse, 400: errorResponse('limit is not a whole number from 1 to 100.'), 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      const attempts = await webhooks.deliveries(address.id, request.query.limit ?? 50);
      return { results: attempts.map(toDelivery) };
    },
  );
};
