// Our own API on a sandbox (docs/api.md "Sandboxes"): POST /api/sandbox/token exchanges a
// sandbox's name and password (JSON or HTTP Basic) for a JWT of its address, and sets the
// `jwt` cookie as POST /api/new_address does; from then on every /api route of an address
// works on the sandbox's mail. GET /api/sandbox tells what the token's sandbox is, and
// GET and PUT /api/sandbox/chaos read and set the faults its own SMTP sessions get.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ChaosSettings, routes, SandboxInfo, SandboxTokenBody, SandboxTokenResponse } from '@temp-inbox/api';
import { AppError, badRequest, notFound, unauthorized } from '../../domain/errors.js';
import { isSandboxAddress, SANDBOX_DOMAIN } from '../../domain/sandboxes.js';
import type { Sandbox, SandboxService } from '../../sandboxes/types.js';
import type { HttpDeps } from '../deps.js';
import { authenticate, sessionIdOf, setJwtCookie, setSessionCookie } from '../auth.js';
import { basicCredentials } from '../basic-auth.js';
import { errorResponse } from '../errors.js';
import { sandboxInfo } from '../presenters.js';

const bearer = [{ bearer: [] }];
const tags = ['sandboxes'];
const rateLimited = errorResponse('Rate limit exceeded, or too many failed logins; see Retry-After.');
const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');

export const sandboxRoutes: FastifyPluginAsync<{ deps: HttpDeps; sandboxes: SandboxService }> = async (fastify, { deps, sandboxes }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { mail, sessions } = deps;

  /** The sandbox the request's JWT belongs to; 404 for an address's token. */
  async function sandboxOf(request: FastifyRequest): Promise<Sandbox> {
    const address = await authenticate(request, mail);
    const sandbox = isSandboxAddress(address.address) ? await sandboxes.findByName(address.address.slice(0, -SANDBOX_DOMAIN.length - 1)) : undefined;
    if (!sandbox || sandbox.addressId !== address.id) throw notFound("This token is not a sandbox's: open a sandbox with POST /api/sandbox/token.");
    return sandbox;
  }

  app.post(
    routes.sandboxToken,
    {
      config: { rateLimit: 'SANDBOX_TOKEN' },
      // No body (HTTP Basic) is the same as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: "A JWT of a sandbox's address",
        description:
          'Checks the sandbox\'s name and password (JSON body, or HTTP Basic with no body) and returns a JWT of its address; also sets the `jwt` cookie. ' +
          'Every /api route of an address then works on the sandbox. Wrong credentials are 401; too many failures from a client or for a name are 429 with Retry-After.',
        tags,
        body: SandboxTokenBody,
        response: {
          200: SandboxTokenResponse,
          400: errorResponse('Neither a JSON body with name and password nor HTTP Basic credentials.'),
          401: errorResponse('Wrong sandbox name or password.'),
          429: rateLimited,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const given = body?.name !== undefined || body?.password !== undefined ? { name: body.name ?? '', password: body.password ?? '' } : basicCredentials(request.headers.authorization);
      if (!given) throw badRequest('Send {"name": ..., "password": ...} as JSON, or the name and password with HTTP Basic authentication.');
      const login = await sandboxes.login(given.name, given.password, request.ip);
      if (!login.ok) {
        if (login.reason === 'locked') throw new AppError('rate_limited', 'Too many failed logins; try again later.', login.retryAfterSec ?? 60);
        throw unauthorized('Wrong sandbox name or password.');
      }
      const { sandbox } = login;
      const jwt = await sandboxes.token(sandbox);
      // Like a new address: the browser's session lists it, so the page can switch back to it.
      const sessionId = await sessions.attach(sessionIdOf(request), { id: sandbox.addressId, address: sandbox.address, createdAt: sandbox.createdAt });
      setJwtCookie(request, reply, jwt);
      setSessionCookie(request, reply, sessionId);
      return { name: sandbox.name, address: sandbox.address, jwt };
    },
  );

  app.get(
    routes.sandbox,
    {
      config: { rateLimit: 'SANDBOX' },
      schema: {
        summary: "The token's sandbox",
        tags,
        security: bearer,
        response: { 200: SandboxInfo, 401: unauthorizedResponse, 404: errorResponse("The token is an address's, not a sandbox's."), 429: rateLimited },
      },
    },
    async (request) => sandboxInfo(await sandboxOf(request)),
  );

  app.get(
    routes.sandboxChaos,
    {
      config: { rateLimit: 'SANDBOX' },
      schema: {
        summary: "The sandbox's chaos settings",
        tags,
        security: bearer,
        response: { 200: ChaosSettings, 401: unauthorizedResponse, 404: errorResponse("The token is an address's, not a sandbox's."), 429: rateLimited },
      },
    },
    async (request) => (await sandboxOf(request)).chaos,
  );

  app.put(
    routes.sandboxChaos,
    {
      config: { rateLimit: 'SANDBOX' },
      schema: {
        summary: "Sets the sandbox's chaos settings",
        description: 'Replaces them whole ({} turns every fault off). Only this sandbox\'s authenticated SMTP sessions get them, from their next command on.',
        tags,
        security: bearer,
        // Checked by the service, whose 400 names the field that is wrong.
        body: Type.Unknown({ description: 'ChaosSettings.' }),
        response: {
          200: ChaosSettings,
          400: errorResponse('A setting out of range or unknown.'),
          401: unauthorizedResponse,
          404: errorResponse("The token is an address's, not a sandbox's."),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const sandbox = await sandboxOf(request);
      const updated = await sandboxes.setChaos(sandbox.id, request.body as never);
      if (!updated) throw notFound('This sandbox no longer exists.');
      return updated.chaos;
    },
  );
};
