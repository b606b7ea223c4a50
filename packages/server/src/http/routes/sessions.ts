import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OpenAddressBody, routes, SessionListing, SuccessResponse, SwitchAddressBody, SwitchAddressResponse } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { clearAuthCookies, sessionIdOf, setJwtCookie, setSessionCookie } from '../auth.js';
import { jsonOnly } from '../body.js';
import { errorResponse } from '../errors.js';

const session = [{ session: [] }];
const noSession = errorResponse('session_id cookie missing, forged, or no longer valid.');

export const sessionRoutes: FastifyPluginAsync<{ deps: HttpDeps }> = async (fastify, { deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { sessions, mail } = deps;

  app.get(
    routes.sessionAddresses,
    {
      schema: {
        summary: 'Addresses of this browser session',
        tags: ['session'],
        security: session,
        response: { 200: SessionListing, 401: noSession },
      },
    },
    async (request) => sessions.list(sessionIdOf(request)),
  );

  app.post(
    routes.switchAddress,
    {
      config: { rateLimit: 'SWITCH_ADDRESS' },
      schema: {
        summary: 'Make another address of the session active',
        description: 'Sets the `jwt` cookie to the chosen address\'s JWT and rotates `session_id`; the old session id stops working.',
        tags: ['session'],
        security: session,
        body: SwitchAddressBody,
        response: {
          200: SwitchAddressResponse,
          400: errorResponse('Body is not {"address": string}.'),
          401: noSession,
          403: errorResponse('The address is not in this session.'),
          429: errorResponse('Rate limit exceeded; see Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const switched = await sessions.switchTo(sessionIdOf(request), request.body.address);
      setJwtCookie(request, reply, await mail.tokenFor(switched.address));
      setSessionCookie(request, reply, switched.sessionId);
      return { success: true, address: switched.address.address };
    },
  );

  app.post(
    routes.openAddress,
    {
      // Counted with switching: both change which inbox this browser shows.
      config: { rateLimit: 'SWITCH_ADDRESS' },
      preValidation: jsonOnly,
      schema: {
        summary: 'Open an existing inbox in this browser session',
        description:
          'Adds the address of `jwt` to the browser session (a new session when there is none) and makes it active: the web UI opens `/#token=<jwt>` links this way. ' +
          'The body must be JSON, so a cross-site form cannot post it.',
        tags: ['session'],
        body: OpenAddressBody,
        response: {
          200: SwitchAddressResponse,
          400: errorResponse('Body is not {"jwt": string}.'),
          401: errorResponse('The token is invalid, expired, or its address no longer exists.'),
          415: errorResponse('The body is not JSON.'),
          429: errorResponse('Rate limit exceeded; see Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const address = await mail.authenticate(request.body.jwt);
      const sessionId = await sessions.attach(sessionIdOf(request), address);
      setJwtCookie(request, reply, request.body.jwt);
      setSessionCookie(request, reply, sessionId);
      return { success: true, address: address.address };
    },
  );

  app.post(
    routes.logout,
    {
      schema: {
        summary: 'End the browser session',
        description: 'Deletes the session server-side and clears the `jwt` and `session_id` cookies. The addresses and their JWTs live on.',
        tags: ['session'],
        security: session,
        response: { 200: SuccessResponse, 401: noSession },
      },
    },
    async (request, reply) => {
      await sessions.logout(sessionIdOf(request));
      clearAuthCookies(request, reply);
      return { success: true };
    },
  );
};
