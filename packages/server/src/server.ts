// Assembles the service: store, mail service, sessions, SMTP receiver, HTTP app
// and the retention sweep, each part from its own configuration section (the
// builders are in assembly/). Tests build the whole thing through startServer on port 0.
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config/index.js';
import { prepareDataDir } from './config/data-dir.js';
import { resolveSecrets } from './config/secrets.js';
import type { WebhookTuning } from './webhooks/dispatcher.js';
import type { App } from './http/app.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { createEventBus, type EventBus } from './mail/events/events.js';
import type { MailService } from './mail/service.js';
import { createSandboxService, type SandboxesService } from './sandboxes/service.js';
import { createFailureLock } from './limits/failure-lock.js';
import { createStore } from './storage/index.js';
import { createStorageState } from './storage/storage-state.js';
import type { Store } from './storage/store.js';
import type { VersionedStore } from './storage/caching-store.js';
import { databaseStartupError, dataDirStartupError, listenStartupError } from './startup-errors.js';
import { openRedis } from './assembly/redis.js';
import { buildMail } from './assembly/mail.js';
import { buildSmtp } from './assembly/smtp.js';
import { buildHttpApp } from './assembly/http.js';

export { REDIS_COMMAND_TIMEOUT_MS } from './assembly/redis.js';

export interface RunningServer {
  config: Config;
  httpPort: number;
  smtpPort: number;
  /** e.g. http://127.0.0.1:8080 (the bound host, or 127.0.0.1 for a wildcard host). */
  httpUrl: string;
  store: Store;
  mail: MailService;
  http: App;
  /** Stops accepting, finishes what is in flight, and closes every connection; says what it drained. */
  stop(): Promise<StopReport>;
}

/** What stop() drained, for the shutdown log line. */
export interface StopReport {
  /** SMTP sessions open when stop() began (each finished or was ended with 421). */
  smtpSessions: number;
  /** HTTP requests in flight when stop() began (each was answered). */
  httpRequests: number;
  /** How long stop() took. */
  ms: number;
}

export interface StartOptions {
  logger?: Logger;
  now?: () => number;
  /** Webhook delivery's timings and resolver (docs/decisions.md "Webhooks"); tests shorten them. */
  webhooks?: Partial<WebhookTuning>;
  /** The random names of new addresses (default: domain/names.ts); tests give a sequence. */
  randomName?: () => string;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  // Asynchronous: lines written while a write is in flight go out together (one
  // system call per burst instead of per line); pino flushes what is left on exit.
  // Bounded so that a stalled stdout reader cannot grow memory without limit.
  const logger = opts.logger ?? pino({ level: config.log.level }, pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }));
  const { dataDir } = config.storage;
  let secrets;
  try {
    for (const warning of prepareDataDir(dataDir)) logger.warn({ dataDir }, warning);
    secrets = resolveSecrets(dataDir, config.secrets);
  } catch (err) {
    throw dataDirStartupError(dataDir, err);
  }
  const store = await createStore(config.storage, {
    onDatabaseError: (err) => logger.warn({ err }, 'database connection lost while idle; the pool replaces it'),
  }).catch((err: unknown) => {
    throw config.storage.databaseUrl ? databaseStartupError(config.storage.databaseUrl, err) : dataDirStartupError(dataDir, err);
  });
  // Run in this order at stop (and on a failed start): each part added later is stopped earlier.
  const cleanups: (() => Promise<unknown>)[] = [() => store.close()];
  try {
    const redis = await openRedis(config.redis, logger);
    if (redis) cleanups.push(() => redis.quit().catch(() => redis.disconnect()));
    const metrics = config.metrics.token ? createMetrics(store.kind) : undefined;
    return await startParts(config, { logger, store, redis, metrics, secrets, now: opts.now ?? Date.now, webhooks: opts.webhooks, randomName: opts.randomName, onStop: (close) => cleanups.unshift(close) }, cleanups);
  } catch (err) {
    for (const c of cleanups) await c().catch(() => undefined);
    throw err;
  }
}

interface PartsContext {
  logger: Logger;
  store: VersionedStore;
  redis: Redis | undefined;
  metrics: Metrics | undefined;
  secrets: { jwtSecret: string; sessionSecret: string };
  now: () => number;
  webhooks: Partial<WebhookTuning> | undefined;
  randomName: (() => string) | undefined;
  onStop(close: () => Promise<unknown>): void;
}

/** Everything after the store and Redis: the parts, their listeners and the sweep. */
async function startParts(config: Config, ctx: PartsContext, cleanups: (() => Promise<unknown>)[]): Promise<RunningServer> {
  const { logger, store, redis, metrics, now } = ctx;
  // DATA_DIR's disk is SQLite's; PostgreSQL's is elsewhere, and only its failed writes tell (docs/security.md "Storage").
  const storage = createStorageState({ dir: store.kind === 'sqlite' ? config.storage.dataDir : undefined, minFree: config.storage.diskMinFree });
  const bus = await createEventBus({ ...(redis ? { redis } : {}), keyPrefix: config.redis.keyPrefix, logger });
  ctx.onStop(() => bus.close());
  const { mail, blocks, webhookTuning, report, refusals } = buildMail(config, { store, bus, jwtSecret: ctx.secrets.jwtSecret, logger, metrics, now, webhooks: ctx.webhooks, randomName: ctx.randomName, onStop: ctx.onStop });
  // MAIL_DOMAINS fills the domain pool at a database's first start; read before anything is served.
  await mail.domains.seed(config.mail.domains, (d) => config.mail.subdomains === 'all' || config.mail.subdomains.includes(d));
  const sandboxes = await startSandboxes(config, { store, mail, bus, redis, logger, now });
  const http = await buildHttpApp(config, { secrets: ctx.secrets, redis, store, storage, mail, blocks, bus, sandboxes, report, refusals, webhookTuning, logger, metrics, now });
  ctx.onStop(() => http.close());
  const smtp = buildSmtp(config, { redis, storage, sandboxes, mail, logger, metrics, countRefusal: refusals.count });
  const smtpPort = await smtp.listen().catch((err: unknown) => {
    throw listenStartupError('SMTP_PORT', config.smtp.host, config.smtp.port, err);
  });
  ctx.onStop(() => smtp.close());
  const { host: httpHost, port } = config.http;
  await http.listen({ host: httpHost, port }).catch((err: unknown) => {
    throw listenStartupError('HTTP_PORT', httpHost, port, err);
  });
  const httpPort = (http.server.address() as AddressInfo).port;
  // Requests in flight, for the shutdown report.
  let httpInFlight = 0;
  http.server.on('request', (_req: unknown, res: ServerResponse) => {
    httpInFlight++;
    res.once('close', () => httpInFlight--);
  });
  const timer = startSweep(mail, config.mail.sweepIntervalMs, logger);

  const host = ['0.0.0.0', '::', ''].includes(httpHost) ? '127.0.0.1' : httpHost;
  // The pool's active domains, which MAIL_DOMAINS only seeds (the admin API changes them).
  logger.info({ http: httpPort, smtp: smtpPort, store: store.kind, domains: await mail.domains.activeDomains() }, 'temp-inbox started');
  let stopping: Promise<StopReport> | undefined;
  return {
    config,
    httpPort,
    smtpPort,
    httpUrl: `http://${host.includes(':') ? `[${host}]` : host}:${httpPort}`,
    store,
    mail,
    http,
    stop() {
      stopping ??= (async () => {
        const started = Date.now();
        const report = { smtpSessions: smtp.sessions(), httpRequests: httpInFlight };
        clearInterval(timer);
        for (const c of cleanups) await c();
        return { ...report, ms: Date.now() - started };
      })();
      return stopping;
    },
  };
}

/**
 * Sandboxes (docs/decisions.md "Sandboxes"): SMTP logins with an inbox of their own; SANDBOXES
 * creates or updates them now (a bad value already stopped start-up in loadConfig).
 */
async function startSandboxes(
  config: Pick<Config, 'sandboxes' | 'limits' | 'redis' | 'mail' | 'smtp'>,
  deps: { store: VersionedStore; mail: MailService; bus: EventBus; redis: Redis | undefined; logger: Logger; now: () => number },
): Promise<SandboxesService> {
  const { redis } = deps;
  const prefix = config.redis.keyPrefix;
  const sandboxes = createSandboxService({
    store: deps.store,
    mail: deps.mail,
    bus: deps.bus,
    defaults: config.sandboxes,
    locks: {
      client: createFailureLock('SANDBOX_LOGIN_FAILURES', config.limits.sandboxLogin.client, redis, prefix),
      login: createFailureLock('SANDBOX_LOGIN_FAILURES_PER_NAME', config.limits.sandboxLogin.login, redis, prefix),
    },
    maxMessageBytes: config.mail.maxMessageBytes,
    hostname: config.smtp.hostname,
    now: deps.now,
  });
  const { logins } = config.sandboxes;
  if (logins.length) deps.logger.info({ sandboxes: (await sandboxes.apply(logins)).map((b) => b.name) }, 'SANDBOXES applied');
  await sandboxes.any();
  return sandboxes;
}

/** The retention sweep: now, then every SWEEP_INTERVAL. */
function startSweep(mail: MailService, intervalMs: number, logger: Logger): NodeJS.Timeout {
  const sweep = () =>
    mail.sweep().then(
      (r) => (r.mails || r.addresses || r.sessions) && logger.info(r, 'retention sweep purged'),
      (err: unknown) => logger.error({ err }, 'retention sweep failed'),
    );
  void sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return timer;
}
