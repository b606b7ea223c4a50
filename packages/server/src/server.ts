// Assembles the service: store, mail service, sessions, SMTP receiver, HTTP app
// and the retention sweep. Tests build the whole thing through startServer on port 0.
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminService } from './admin/service.js';
import { createBlockList } from './blocks/block-list.js';
import { createBotChallenge } from './challenge/challenge.js';
import type { Config } from './config/index.js';
import { prepareDataDir } from './config/data-dir.js';
import { resolveSecrets } from './config/secrets.js';
import { foldName } from './domain/names.js';
import { createTokens } from './domain/tokens.js';
import { createDispatcher, exponentialBackoff, type WebhookTuning } from './webhooks/dispatcher.js';
import { dnsLookup } from './webhooks/guard.js';
import { createWebhookService } from './webhooks/service.js';
import { buildHttp, type App } from './http/app.js';
import { createMetrics } from './observability/metrics.js';
import { createRateLimiter } from './http/rate-limit.js';
import { createWindowLimiter } from './limits/window-limiter.js';
import { createMailAuthenticator } from './mail/auth/auth.js';
import { createEventBus } from './mail/events/events.js';
import { createMessageParser } from './mail/parse/parse.js';
import { createMailService, type MailService } from './mail/service.js';
import { createMailtmService } from './mailtm/service.js';
import { createLoginGuard } from './mailtm/login-guard.js';
import { createSandboxService } from './sandboxes/service.js';
import { createFailureLock } from './limits/failure-lock.js';
import { createSessionService, SESSION_LIFETIME_SECONDS } from './sessions/service.js';
import { createSmtpReceiver } from './smtp/smtp-receiver.js';
import { createStore } from './storage/index.js';
import { createStorageState } from './storage/storage-state.js';
import type { Store } from './storage/store.js';
import { databaseStartupError, dataDirStartupError, listenStartupError, redisStartupError } from './startup-errors.js';

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

/** How long a Redis command may take before it counts as failed (see startServer). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

export interface StartOptions {
  logger?: Logger;
  now?: () => number;
  /** Webhook delivery's timings and resolver (docs/decisions.md "Webhooks"); tests shorten them. */
  webhooks?: Partial<WebhookTuning>;
}

/** Webhook delivery: 5 s per attempt, retries for 24 h, 16 attempts in flight per node, a 60 s lease (docs/decisions.md "Webhooks"). */
const WEBHOOK_DEFAULTS = {
  timeoutMs: 5000,
  retryForMs: 24 * 3_600_000,
  concurrency: 16,
  leaseMs: 60_000,
  pollMs: 1000,
  keepAttemptsMs: 7 * 86_400_000,
} as const;

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  // Asynchronous: lines written while a write is in flight go out together (one
  // system call per burst instead of per line); pino flushes what is left on exit.
  // Bounded so that a stalled stdout reader cannot grow memory without limit.
  const logger = opts.logger ?? pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }));
  let secrets;
  try {
    for (const warning of prepareDataDir(config.dataDir)) logger.warn({ dataDir: config.dataDir }, warning);
    secrets = resolveSecrets(config.dataDir, { jwtSecret: config.jwtSecret, sessionSecret: config.sessionSecret });
  } catch (err) {
    throw dataDirStartupError(config.dataDir, err);
  }
  const store = await createStore(config, {
    onDatabaseError: (err) => logger.warn({ err }, 'database connection lost while idle; the pool replaces it'),
  }).catch((err: unknown) => {
    throw config.databaseUrl ? databaseStartupError(config.databaseUrl, err) : dataDirStartupError(config.dataDir, err);
  });
  // A command Redis does not answer within REDIS_COMMAND_TIMEOUT_MS fails, like one sent
  // while it is disconnected: the limits then count per node in memory and events stay
  // local. Without it a Redis that stops answering but keeps the connection open
  // (a partition, a stalled server) would hold every rate-limited request and every
  // MAIL FROM until TCP gave up, hours later.
  // Loaded only when configured: a single node on SQLite starts without it (about 0.1 s less).
  const redis: Redis | undefined = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, commandTimeout: REDIS_COMMAND_TIMEOUT_MS })
    : undefined;
  const cleanups: (() => Promise<unknown>)[] = [() => store.close()];
  try {
    if (redis) {
      // ioredis rejects a failed connect with "Connection is closed."; the reason is in the last 'error'.
      let connectError: unknown;
      const remember = (err: unknown) => (connectError = err);
      redis.on('error', remember);
      try {
        await redis.connect();
      } catch (err) {
        redis.disconnect();
        throw redisStartupError(config.redisUrl!, err, connectError);
      }
      redis.off('error', remember);
      redis.on('error', (err) => logger.warn({ err }, 'redis error'));
      cleanups.push(() => redis.quit().catch(() => redis.disconnect()));
    }
    const metrics = config.metricsToken ? createMetrics(store.kind) : undefined;
    // DATA_DIR's disk is SQLite's; PostgreSQL's is elsewhere, and only its failed writes tell (docs/security.md "Storage").
    const storage = createStorageState({ dir: store.kind === 'sqlite' ? config.dataDir : undefined, minFree: config.diskMinFree });
    const bus = await createEventBus({ ...(redis ? { redis } : {}), keyPrefix: config.redisKeyPrefix, logger });
    cleanups.unshift(() => bus.close());
    const now = opts.now ?? Date.now;
    const parser = createMessageParser({ threads: config.parseThreads, timeoutMs: config.parseTimeoutMs });
    cleanups.unshift(() => parser.close());
    const authenticator = config.authChecks
      ? createMailAuthenticator({
          dnsServers: config.dnsServers,
          mta: config.smtpHostname,
          cpuMs: config.parseTimeoutMs,
          onDnsSilence: (silent) => {
            metrics?.authDnsSilent(silent);
            if (silent) logger.warn({ dnsServers: config.dnsServers ?? 'system' }, 'the DNS servers answer nothing: authentication look-ups give temperror at once until they answer again (asked every 5 s)');
            else logger.info('the DNS servers answer again: authentication look-ups resumed');
          },
        })
      : undefined;
    if (authenticator) cleanups.unshift(() => authenticator.close());
    // The operators' blocks, refused at SMTP MAIL FROM; read from the database, so every node honours them.
    const blocks = createBlockList(store, { logger });
    // Webhooks: the mail service queues each mail's deliveries in its own transaction and
    // wakes this node's dispatcher, which sends them; stopped before the store closes.
    const webhookTuning: WebhookTuning = { ...WEBHOOK_DEFAULTS, backoff: exponentialBackoff(), timeoutHold: exponentialBackoff(30_000, 1_800_000), lookup: dnsLookup(), ...opts.webhooks };
    const operatorWebhook = config.webhookUrl && config.webhookSecret ? { url: config.webhookUrl, secret: config.webhookSecret } : undefined;
    const dispatcher = createDispatcher({ ...webhookTuning, store, logger, metrics, now, allowPrivate: config.webhookAllowPrivate, operator: operatorWebhook });
    cleanups.unshift(() => dispatcher.stop());
    const mail = createMailService({
      blocks,
      parser,
      authenticator,
      quota: { maxMails: config.addressMaxMails, maxBytes: config.addressMaxBytes },
      tokenMaxLength: config.jwtMaxLength,
      plusAddressing: config.plusAddressing,
      catchAll: config.catchAll,
      bus,
      store,
      tokens: createTokens(secrets.jwtSecret),
      names: { customNames: config.customNames, blocklist: new Set(config.nameBlocklist.map(foldName)), domains: config.mailDomains },
      mailTtlMs: config.mailTtlMs,
      addressTtlMs: config.addressTtlMs,
      sessionTtlMs: SESSION_LIFETIME_SECONDS * 1000,
      outbox: { operator: operatorWebhook !== undefined, queued: () => dispatcher.wake() },
      parsedViews: { perClient: config.parseViewsPerClient, total: config.parseViewsWaiting },
      onKeepError: (err) => logger.warn({ err }, 'the degraded parsed view of a mail could not be kept'),
      now,
    });
    // Sandboxes (docs/decisions.md "Sandboxes"): SMTP logins with an inbox of their own; SANDBOXES
    // creates or updates them now (a bad value already stopped start-up in loadConfig).
    const sandboxes = createSandboxService({
      store,
      mail,
      bus,
      defaults: { maxMails: config.sandboxMaxMails, maxBytes: config.sandboxMaxBytes, retentionMs: config.sandboxRetentionMs },
      locks: {
        client: createFailureLock('SANDBOX_LOGIN_FAILURES', config.sandboxLoginFailures, redis, config.redisKeyPrefix),
        login: createFailureLock('SANDBOX_LOGIN_FAILURES_PER_NAME', config.sandboxLoginFailuresPerName, redis, config.redisKeyPrefix),
      },
      maxMessageBytes: config.maxMessageBytes,
      hostname: config.smtpHostname,
      now,
    });
    if (config.sandboxes.length) logger.info({ sandboxes: (await sandboxes.apply(config.sandboxes)).map((b) => b.name) }, 'SANDBOXES applied');
    await sandboxes.any();
    const http = await buildHttp({
      config,
      sessionSecret: secrets.sessionSecret,
      store,
      storage,
      mail,
      bus,
      sandboxes,
      sessions: createSessionService(store, now),
      webhooks: createWebhookService({ store, allowPrivate: config.webhookAllowPrivate, lookup: webhookTuning.lookup, resolveTimeoutMs: webhookTuning.timeoutMs, now }),
      challenge: createBotChallenge(config, { sessionSecret: secrets.sessionSecret, redis, now, logger }),
      limiter: createRateLimiter(config.rateLimits, redis, config.redisKeyPrefix),
      logger,
      ...(metrics ? { metrics } : {}),
      ...(config.adminToken ? { admin: createAdminService({ store, mail, blocks, now }) } : {}),
      ...(config.mailtmApi
        ? {
            mailtm: createMailtmService({
              store,
              mail,
              secret: secrets.jwtSecret,
              domains: config.mailDomains,
              quotaBytes: config.addressMaxBytes,
              mailTtlMs: config.mailTtlMs,
              addressTtlMs: config.addressTtlMs,
              loginGuard: createLoginGuard(
                { perAccount: config.mailtmLoginFailures, perNetwork: config.mailtmLoginFailuresNetwork, perProvider: config.mailtmLoginFailuresProvider },
                redis,
                config.redisKeyPrefix,
              ),
              now,
            }),
          }
        : {}),
    });
    cleanups.unshift(() => http.close());
    const smtp = createSmtpReceiver(
      {
        host: config.smtpHost,
        port: config.smtpPort,
        hostname: config.smtpHostname,
        maxMessageBytes: config.maxMessageBytes,
        tlsCert: config.smtpTlsCert,
        tlsKey: config.smtpTlsKey,
        maxClients: config.smtpMaxClients,
        maxClientsPerIp: config.smtpMaxClientsPerIp,
        trustedNetworks: config.smtpTrustedNetworks,
        inflightBytes: config.smtpInflightBytes,
        clientInflightBytes: config.smtpClientInflightBytes || Math.max(config.maxMessageBytes, Math.floor(config.smtpInflightBytes / 8)),
        dataMinRate: config.smtpDataMinRate,
        dataRateWindowMs: config.smtpDataRateWindowMs,
        transactionTimeoutMs: config.smtpTransactionTimeoutMs,
        commandTimeoutMs: config.smtpCommandTimeoutMs,
        maxJunkCommands: config.smtpMaxJunkCommands,
        maxBadRecipients: config.smtpMaxBadRecipients,
        maxLineBytes: config.smtpMaxLineBytes,
        maxRecipients: config.smtpMaxRecipients,
        badRecipientDelayMs: config.smtpBadRecipientDelayMs,
        greetingDelayMs: config.smtpGreetingDelayMs,
        limits: {
          messages: createWindowLimiter('SMTP_MESSAGES', config.smtpRateMessages, redis, config.redisKeyPrefix),
          recipients: createWindowLimiter('SMTP_RECIPIENTS', config.smtpRateRecipients, redis, config.redisKeyPrefix),
          bytes: createWindowLimiter('SMTP_BYTES', config.smtpRateBytes, redis, config.redisKeyPrefix),
          newAddresses: config.catchAll ? createWindowLimiter('SMTP_NEW_ADDRESSES', config.smtpRateNewAddresses, redis, config.redisKeyPrefix) : undefined,
          // A day's budget is found again by a retrying sender once the day is over: no block is re-armed by a refusal.
          dailyBytes: createWindowLimiter('SMTP_DAILY_BYTES', { max: config.smtpDailyBytes, windowSeconds: 86_400 }, redis, config.redisKeyPrefix, { rearm: false }),
        },
        storage,
        auth: {
          allowInsecure: config.smtpAuthAllowInsecure,
          login: {
            offered: () => sandboxes.offered(),
            async login(name, password, client) {
              const r = await sandboxes.login(name, password, client);
              return r.ok ? { ok: true, account: r.sandbox } : r;
            },
            current: (account) => sandboxes.current(account.id),
            async capture(account, m) {
              await sandboxes.capture(account, m.message, { from: m.sender, to: m.recipients }, m.client, m.trace);
            },
          },
        },
      },
      mail,
      logger,
      metrics,
    );
    const smtpPort = await smtp.listen().catch((err: unknown) => {
      throw listenStartupError('SMTP_PORT', config.smtpHost, config.smtpPort, err);
    });
    cleanups.unshift(() => smtp.close());
    await http.listen({ host: config.httpHost, port: config.httpPort }).catch((err: unknown) => {
      throw listenStartupError('HTTP_PORT', config.httpHost, config.httpPort, err);
    });
    const httpPort = (http.server.address() as AddressInfo).port;
    // Requests in flight, for the shutdown report.
    let httpInFlight = 0;
    http.server.on('request', (_req: unknown, res: ServerResponse) => {
      httpInFlight++;
      res.once('close', () => httpInFlight--);
    });

    const sweep = () =>
      mail.sweep().then(
        (r) => (r.mails || r.addresses || r.sessions) && logger.info(r, 'retention sweep purged'),
        (err: unknown) => logger.error({ err }, 'retention sweep failed'),
      );
    void sweep();
    const timer = setInterval(sweep, config.sweepIntervalMs);
    timer.unref();

    const host = ['0.0.0.0', '::', ''].includes(config.httpHost) ? '127.0.0.1' : config.httpHost;
    logger.info({ http: httpPort, smtp: smtpPort, store: store.kind, domains: config.mailDomains }, 'temp-inbox started');
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
  } catch (err) {
    for (const c of cleanups) await c().catch(() => undefined);
    throw err;
  }
}
