import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DomainsResponse, NewAddressBody, NewAddressResponse, routes, SettingsResponse, SuccessResponse } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate, clearJwtCookie, credentialOf, jwtCookieIs, sessionIdOf, setJwtCookie, setSessionCookie } from '../auth.js';
import { errorResponse } from '../errors.js';
import { forbidden } from '../../domain/errors.js';
import { isSandboxAddress } from '../../domain/sandboxes.js';

const bearer = [{ bearer: [] }];
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');

export const addressRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail, sessions, challenge } = deps;

  // Clients that POST without a body get the same treatment as `{}`.
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.routeOptions.url === routes.newAddress && request.body === undefined) request.body = {};
  });

  app.post(
    routes.newAddress,
    {
      config: { rateLimit: 'NEW_ADDRESS' },
      schema: {
        summary: 'Create an address',
        description: 'Creates an address (random local part unless `name` is given), returns its JWT and sets the `jwt` and `session_id` cookies.',
        tags: ['addresses'],
        body: NewAddressBody,
        response: {
          200: NewAddressResponse,
          400: errorResponse('Invalid name, a domain not in the pool or not active, reserved name, or missing/rejected cf_token.'),
          403: errorResponse('Custom names are disabled on this server.'),
          409: errorResponse('The requested name is taken by a live address.'),
          429: rateLimited,
          503: errorResponse('The bot-challenge verifier is unreachable, or no domain of the pool is active.'),
        },
      },
    },
    async (request, reply) => {
      await challenge.verify(request.body.cf_token, request.ip);
      const created = await mail.createAddress({ name: request.body.name, domain: request.body.domain });
      const sessionId = await sessions.attach(sessionIdOf(request), created.address);
      setJwtCookie(request, reply, created.jwt);
      setSessionCookie(request, reply, sessionId);
      return { address: created.address.address, jwt: created.jwt };
    },
  );

  app.get(
    routes.domains,
    {
      config: { rateLimit: 'SETTINGS' },
      schema: {
        summary: 'The domains new addresses may take',
        description: "The domain pool's active domains, the default first (POST /api/new_address takes one in `domain`).",
        tags: ['addresses'],
        response: { 200: DomainsResponse, 429: rateLimited },
      },
    },
    async (_request, reply) => {
      // An admin's change shows on every node within a second: not to be cached longer.
      reply.header('cache-control', 'no-store');
      return { domains: await mail.domains.activeDomains() };
    },
  );

  app.get(
    routes.settings,
    {
      config: { rateLimit: 'SETTINGS' },
      schema: {
        summary: 'The address bound to the JWT',
        tags: ['addresses'],
        security: bearer,
        response: { 200: SettingsResponse, 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => ({ address: (await authenticate(request, mail)).address }),
  );

  app.delete(
    routes.deleteAddress,
    {
      config: { rateLimit: 'DELETE_ADDRESS' },
      schema: {
        summary: 'Delete the address and all its mail',
        description:
          'Irreversible. The JWT stops working, SMTP refuses further mail, and the name becomes free. ' +
          'When the `jwt` cookie held the deleted address\'s JWT, it moves to the address the browser session now has active (as POST /api/switch_address would, `session_id` rotated), or is cleared when the session has none left.',
        tags: ['addresses'],
        security: bearer,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 403: errorResponse("A sandbox's token: its inbox is deleted with the sandbox."), 429: rateLimited },
      },
    },
    async (request, reply) => {
      const token = credentialOf(request);
      const address = await mail.authenticate(token);
      // A sandbox's address goes with its sandbox, which only the operators delete.
      if (isSandboxAddress(address.address)) throw forbidden("A sandbox's inbox cannot be deleted with its token: clear its mail with POST /api/clear_inbox, or ask the operators to delete the sandbox.");
      await mail.deleteAddress(address.id);
      // A browser whose cookie named the deleted address would otherwise get 401 on every
      // request while its session lists another address as active (docs/decisions.md "Sessions").
      if (jwtCookieIs(request, token)) {
        const id = sessionIdOf(request);
        const next = id ? (await sessions.list(id).catch(() => undefined))?.activeAddress : undefined;
        const switched = next ? await sessions.switchTo(id, next).catch(() => undefined) : undefined;
        if (switched) {
          setJwtCookie(request, reply, await mail.tokenFor(switched.address));
          setSessionCookie(request, reply, switched.sessionId);
        } else clearJwtCookie(request, reply);
      }
      return { success: true };
    },
  );
};
