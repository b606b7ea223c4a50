// /api/admin/sandboxes (docs/api.md "Admin"): the operators create, list, rotate the password
// of and delete sandboxes at run time. They live in the database, so every node of a
// PostgreSQL deployment knows them. Registered only with ADMIN_TOKEN, behind the same check
// as the rest of /api/admin (a wrong token counts under RATE_LIMIT_ADMIN; each action is logged).
import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AdminIdParams, AdminNewSandboxBody, AdminSandboxesResponse, AdminSandboxPasswordBody, routes, SandboxInfo, SuccessResponse } from '@temp-inbox/api';
import { AppError, badRequest, notFound, unauthorized } from '../../domain/errors.js';
import type { SandboxService } from '../../sandboxes/types.js';
import { createAdminAuth } from '../admin-auth.js';
import type { HttpDeps } from '../deps.js';
import { errorResponse } from '../errors.js';
import { sandboxInfo } from '../presenters.js';

const tags = ['admin'];
const hide = true;
const unauthorizedResponse = errorResponse('Missing or wrong admin token.');
const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');

function idOf(raw: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw badRequest('Invalid sandbox id: a positive whole number.');
  return id;
}

export const adminSandboxRoutes: FastifyPluginAsync<{ deps: HttpDeps; sandboxes: SandboxService; token: string }> = async (fastify, { deps, sandboxes, token }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const auth = createAdminAuth(token, deps.sessionSecret);
  const { logger } = deps;

  const requireAdmin: onRequestAsyncHookHandler = async (request) => {
    if (auth.verify(request.headers.authorization)) return;
    const decision = deps.limiter.limits('ADMIN') ? await deps.limiter.consume('ADMIN', request.ip) : { allowed: true, retryAfter: 0 };
    logger.warn({ reqId: request.id, ip: request.ip, limited: !decision.allowed }, 'admin token refused');
    if (!decision.allowed) throw new AppError('rate_limited', 'Too many requests; slow down and retry later.', decision.retryAfter);
    throw unauthorized('Send "Authorization: Bearer <ADMIN_TOKEN>".');
  };
  const log = (ip: string, action: string, details: Record<string, unknown>) => logger.info({ by: auth.holder, ip, adminAction: action, ...details }, 'admin action');

  app.get(
    routes.adminSandboxes,
    { onRequest: requireAdmin, schema: { hide, tags, summary: 'Every sandbox, by name', response: { 200: AdminSandboxesResponse, 401: unauthorizedResponse, 429: rateLimited } } },
    async () => ({ results: (await sandboxes.list()).map(sandboxInfo) }),
  );

  app.post(
    routes.adminSandboxes,
    {
      onRequest: requireAdmin,
      schema: {
        hide,
        tags,
        summary: 'Creates a sandbox (or sets the password and limits of one of that name)',
        body: AdminNewSandboxBody,
        response: { 200: SandboxInfo, 400: errorResponse('Invalid name, password or limit.'), 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const b = request.body;
      const sandbox = await sandboxes.put({
        name: b.name,
        password: b.password,
        ...(b.max_mails === undefined ? {} : { maxMails: b.max_mails }),
        ...(b.max_bytes === undefined ? {} : { maxBytes: b.max_bytes }),
        ...(b.retention_ms === undefined ? {} : { retentionMs: b.retention_ms }),
      });
      log(request.ip, 'sandboxes.put', { sandbox: sandbox.id, name: sandbox.name });
      return sandboxInfo(sandbox);
    },
  );

  app.put(
    routes.adminSandboxPassword,
    {
      onRequest: requireAdmin,
      schema: {
        hide,
        tags,
        summary: "Sets a sandbox's password (the old one stops working at once for new logins)",
        params: AdminIdParams,
        body: AdminSandboxPasswordBody,
        response: { 200: SuccessResponse, 400: errorResponse('Invalid id or password.'), 401: unauthorizedResponse, 404: errorResponse('No such sandbox.'), 429: rateLimited },
      },
    },
    async (request) => {
      const id = idOf(request.params.id);
      if (!(await sandboxes.setPassword(id, request.body.password))) throw notFound('No such sandbox.');
      log(request.ip, 'sandboxes.password', { sandbox: id });
      return { success: true };
    },
  );

  app.delete(
    routes.adminSandbox,
    {
      onRequest: requireAdmin,
      schema: {
        hide,
        tags,
        summary: 'Deletes a sandbox with all its mail',
        params: AdminIdParams,
        response: { 200: SuccessResponse, 400: errorResponse('Invalid id.'), 401: unauthorizedResponse, 404: errorResponse('No such sandbox.'), 429: rateLimited },
      },
    },
    async (request) => {
      const id = idOf(request.params.id);
      if (!(await sandboxes.delete(id))) throw notFound('No such sandbox.');
      log(request.ip, 'sandboxes.delete', { sandbox: id });
      return { success: true };
    },
  );
};
