// The Fastify app factory. Everything it needs is passed in; tests build the
// same app through server.ts on port 0.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyInstance, type FastifyRequest, type onRequestHookHandler, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import cookie from '@fastify/cookie';
import type { Logger } from 'pino';
import swagger from '@fastify/swagger';
import { cachedSchemaCompilers } from './schema-compilers.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { API_VERSION, mounts, routes } from '@temp-inbox/api';
import type { RateLimitRoute, TrustProxy } from '../config/index.js';
import { AppError } from '../domain/errors.js';
import { registerCors } from './cors.js';
import { answerOddRequests, clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.js';
import { acceptEmptyJson } from './body.js';
import type { Metrics } from '../observability/metrics.js';
import type { RateLimiter } from './rate-limit.js';
import { lazyChildLogger, redactUrl } from './request-logger.js';
import { addressRoutes } from './routes/addresses.js';
import { adminPageRoutes } from './routes/admin-page.js';
import { adminRoutes } from './routes/admin.js';
import { adminSandboxRoutes } from './routes/admin-sandboxes.js';
import { sandboxRoutes } from './routes/sandboxes.js';
import { challengeRoutes } from './routes/challenge.js';
import { mailRoutes } from './routes/mails.js';
import { reportRoutes } from './routes/report.js';
import { mailtmRoutes } from './routes/mailtm/index.js';
import { mailhogRoutes } from './routes/mailhog/index.js';
import { mailpitRoutes } from './routes/mailpit/index.js';
import { createBasicAuth } from './basic-auth.js';
import { searchRoutes } from './routes/search.js';
import { pushRoutes } from './routes/push.js';
import { sessionRoutes } from './routes/sessions.js';
import { systemRoutes } from './routes/system.js';
import { uiRoutes } from './routes/ui.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { HttpDeps } from './deps.js';
import { createStreamAdmission } from './stream-admission.js';
import { capConnections } from './connection-caps.js';
import { createLargeAnswers } from './large-answers.js';

export type { HttpDeps };


declare module 'fastify' {
  interface FastifyContextConfig {
    /** The RATE_LIMIT_<ROUTE> rule this route is counted under. */
    rateLimit?: RateLimitRoute;
  }
}

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * One access-log line per request, when it completes, instead of Fastify's two:
 * at debug for an answered request, at info for a client error, at warn for a
 * server error. Clients poll, so at the default level the log shows what went
 * wrong rather than every poll (writing a line costs more than answering a poll
 * from the response cache); LOG_LEVEL=debug logs them all. Written through the
 * app's logger with the request id as a field, so that no per-request child
 * logger is built for it (request-logger.ts).
 */
class AccessLog extends LogController {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
  ) {
    super();
  }
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    // Route templates, not URLs, so that the number of series stays small.
    this.metrics?.request(request.method, request.routeOptions.url ?? '(no route)', status, reply.elapsedTime / 1000);
    const probe = !error && isExpectedProbe(request, status);
    if (!error && (status < 400 || probe) && !this.logger.isLevelEnabled('debug')) return;
    const line = { reqId: request.id, method: request.method, url: redactUrl(request.url), ip: request.ip, status, ms: Math.round(reply.elapsedTime * 100) / 100 };
    if (error) this.logger.error({ ...line, err: error }, 'request errored');
    else if (status >= 500) this.logger.warn(line, 'server error response');
    else if (status >= 400 && !probe) this.logger.info(line, 'request');
    else this.logger.debug(line, probe ? 'request (an expected probe)' : 'request');
  }
}

/**
 * A 4xx that is an answer, not a client's mistake: every SDK client asks GET /api/challenge
 * once, and its 404 means "no proof of work" (CHALLENGE is not pow). Logged at debug.
 */
function isExpectedProbe(request: FastifyRequest, status: number): boolean {
  return status === 404 && (request.method === 'GET' || request.method === 'HEAD') && request.url.split('?')[0] === routes.challenge;
}

const kRequestId = Symbol('requestId');
type TaggedRequest = IncomingMessage & { [kRequestId]?: string };

function rateLimitHook(limiter: RateLimiter, route: RateLimitRoute): onRequestHookHandler {
  return (request, _reply, done) => {
    limiter.consume(route, request.ip).then(
      (decision) => done(decision.allowed ? undefined : new AppError('rate_limited', 'Too many requests; slow down and retry later.', decision.retryAfter)),
      (err: Error) => done(err),
    );
  };
}

/** GET /metrics in the Prometheus text format, for a Bearer token equal to METRICS_TOKEN. */
function metricsRoute(metrics: Metrics, token: string) {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (scope: FastifyInstance) => {
    scope.get(routes.metrics, { schema: { hide: true } }, async (request, reply) => {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new AppError('unauthorized', 'Send "Authorization: Bearer <METRICS_TOKEN>".');
      }
      return reply.type(metrics.registry.contentType).header('cache-control', 'no-store').send(await metrics.registry.metrics());
    });
  };
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count becomes "trust the n nearest hops":
 * Fastify itself trusts no hop for a bare number, which would silently ignore the
 * setting. (true is refused by the configuration.)
 */
function trustProxyOption(trust: TrustProxy | undefined): boolean | string | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust ?? false;
}

/** How often Node looks for requests past HTTP_REQUEST_TIMEOUT (at most: a shorter timeout is checked as often as it lasts). */
const REQUEST_TIMEOUT_CHECK_MS = 5000;

export async function buildHttp(deps: HttpDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: trustProxyOption(deps.config.http.trustProxy),
    bodyLimit: deps.config.http.bodyLimit,
    // A body trickled in a byte at a time would otherwise hold its connection for ever
    // (Fastify leaves Node's request timeout off); Node checks it every 5 s (docs/security.md "HTTP").
    // Given to the server as it is made: Node 20 ignores a request timeout set afterwards
    // on a server made without one, as Fastify sets it.
    requestTimeout: deps.config.http.requestTimeoutMs,
    // Fastify's default (72 s, renewed by every request) let idle connections pile up (docs/security.md "HTTP connections").
    keepAliveTimeout: deps.config.http.keepAliveTimeoutMs,
    http: { requestTimeout: deps.config.http.requestTimeoutMs, connectionsCheckingInterval: Math.min(REQUEST_TIMEOUT_CHECK_MS, deps.config.http.requestTimeoutMs) },
    genReqId: (req) => (req as TaggedRequest)[kRequestId] ?? randomUUID(),
    logController: new AccessLog(deps.logger, deps.metrics),
    childLoggerFactory: lazyChildLogger,
    routerOptions: { maxParamLength: deps.config.http.maxParamLength },
    // No type coercion: {"name": 5} is a 400, not the name "5". Query integers are
    // parsed strictly by the routes that take them.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    // Fastify's own compilers, each route schema compiled once per process (schema-compilers.ts).
    schemaController: cachedSchemaCompilers,
    // Errors raised before routing are plain text too (docs/decisions.md "Errors").
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Headers every response carries, errors included: set on the raw response as it
  // arrives, before Fastify's own listener, so no hook runs per request for them.
  app.server.prependListener('request', (req: TaggedRequest, res: ServerResponse) => {
    const id = randomUUID();
    req[kRequestId] = id;
    res.setHeader('x-request-id', id);
    res.setHeader('x-content-type-options', 'nosniff');
  });

  capConnections(app.server, deps.config.http);
  installErrorHandling(app, deps.storage);
  answerOddRequests(app.server);
  acceptEmptyJson(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'temp-inbox',
        version: API_VERSION,
        description: 'Temporary email inboxes: real SMTP in, a JWT-guarded REST API out. Errors are text/plain.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, session: { type: 'apiKey', in: 'cookie', name: 'session_id' } } },
    },
  });

  // Before any route: its hook answers preflights ahead of the rate limits and authentication.
  await registerCors(app, deps.config.http.corsOrigins);

  // Rate limits run as a route-level hook on the routes that have one, so every
  // other request passes no hook for them.
  app.addHook('onRoute', (route) => {
    const name = route.config?.rateLimit;
    if (!name || !deps.limiter.limits(name)) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [rateLimitHook(deps.limiter, name), ...existing];
  });

  await app.register(systemRoutes, { deps });
  await app.register(challengeRoutes, { deps });
  if (deps.metrics && deps.config.metrics.token) await app.register(metricsRoute(deps.metrics, deps.config.metrics.token));
  // One count of the large answers being sent to each client, for our routes and mail.tm's (HTTP_ANSWER_BYTES_PER_CLIENT).
  const answers = createLargeAnswers(deps.config.http);
  await app.register(mailRoutes, { deps, answers });
  await app.register(reportRoutes, { deps, report: deps.report });
  await app.register(searchRoutes, { deps });
  // One count of what is open for every kind of stream (EVENTS_PER_*).
  const streams = createStreamAdmission(deps.config.events, deps.metrics);
  await app.register(pushRoutes, { deps, streams });
  // MCP=on: /mcp for AI agents, its waits counted with the streams and waits above. Off: the usual 404.
  // Loaded only then: the MCP SDK is not loaded by a server that does not serve it.
  if (deps.config.mcp.on) await app.register((await import('./routes/mcp.js')).mcpRoutes, { deps, streams });
  // MAILTM_API=off: no route under /mailtm, so every path there is the usual 404.
  if (deps.mailtm) await app.register(mailtmRoutes, { prefix: mounts.mailtm, deps, mailtm: deps.mailtm, streams, answers });
  // The sandboxes' Mailpit- and MailHog-compatible APIs: mounted whenever sandboxes can exist
  // (SANDBOXES, or the admin's), every route 401 without a sandbox's Basic credentials.
  if (deps.sandboxes) {
    const auth = createBasicAuth(deps.sandboxes);
    await app.register(mailpitRoutes, { prefix: mounts.mailpit, deps, sandboxes: deps.sandboxes, auth, answers });
    await app.register(mailhogRoutes, { prefix: mounts.mailhog, deps, sandboxes: deps.sandboxes, auth, answers });
  }
  await app.register(webhookRoutes, { deps });
  await app.register(uiRoutes, { deps });
  // Without ADMIN_TOKEN neither exists: /api/admin/* and /admin are the usual 404.
  const adminToken = deps.config.admin.token;
  if (deps.admin && adminToken) {
    await app.register(adminRoutes, { deps, admin: deps.admin, token: adminToken });
    await app.register(adminPageRoutes, { deps });
    if (deps.sandboxes) await app.register(adminSandboxRoutes, { deps, sandboxes: deps.sandboxes, token: adminToken });
  }
  // Only the routes that set or read the session cookie parse cookies on every
  // request; the others read the `jwt` cookie when they need it (auth.ts).
  await app.register(async (scope) => {
    await scope.register(cookie, { secret: deps.sessionSecret, hook: 'onRequest' });
    await scope.register(addressRoutes, { deps });
    await scope.register(sessionRoutes, { deps });
    // POST /api/sandbox/token sets the jwt and session_id cookies as POST /api/new_address does.
    if (deps.sandboxes) await scope.register(sandboxRoutes, { deps, sandboxes: deps.sandboxes });
  });
  return app;
}
