// The HTTP app with the features it serves, each built from its own section.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createAdminService } from '../admin/service.js';
import type { BlockList } from '../blocks/block-list.js';
import { createBotChallenge } from '../challenge/challenge.js';
import type { Config } from '../config/index.js';
import { buildHttp, type App } from '../http/app.js';
import { createRateLimiter } from '../http/rate-limit.js';
import type { EventBus } from '../mail/events/events.js';
import type { RefusalCounts } from '../mail/refusal-counts.js';
import type { MailService } from '../mail/service.js';
import { createLoginGuard } from '../mailtm/login-guard.js';
import { createMailtmService } from '../mailtm/service.js';
import type { Metrics } from '../observability/metrics.js';
import type { SandboxesService } from '../sandboxes/service.js';
import type { ReportService } from '../report/service.js';
import { createSessionService } from '../sessions/service.js';
import type { StorageState } from '../storage/storage-state.js';
import type { VersionedStore } from '../storage/caching-store.js';
import type { WebhookTuning } from '../webhooks/dispatcher.js';
import { createWebhookService } from '../webhooks/service.js';

export interface HttpPartsDeps {
  secrets: { jwtSecret: string; sessionSecret: string };
  redis: Redis | undefined;
  store: VersionedStore;
  storage: StorageState;
  mail: MailService;
  blocks: BlockList;
  bus: EventBus;
  sandboxes: SandboxesService;
  report: ReportService;
  refusals: RefusalCounts;
  webhookTuning: WebhookTuning;
  logger: Logger;
  metrics: Metrics | undefined;
  now: () => number;
}

export function buildHttpApp(config: Config, deps: HttpPartsDeps): Promise<App> {
  const { store, mail, redis, now, logger, metrics } = deps;
  const prefix = config.redis.keyPrefix;
  return buildHttp({
    config,
    sessionSecret: deps.secrets.sessionSecret,
    store,
    storage: deps.storage,
    mail,
    bus: deps.bus,
    sandboxes: deps.sandboxes,
    sessions: createSessionService(store, now),
    report: deps.report,
    webhooks: createWebhookService({ store, allowPrivate: config.webhooks.allowPrivate, lookup: deps.webhookTuning.lookup, resolveTimeoutMs: deps.webhookTuning.timeoutMs, now }),
    challenge: createBotChallenge(config.challenge, { sessionSecret: deps.secrets.sessionSecret, redis, keyPrefix: prefix, now, logger }),
    limiter: createRateLimiter(config.limits.routes, redis, prefix),
    logger,
    ...(metrics ? { metrics } : {}),
    ...(config.admin.token ? { admin: createAdminService({ store, mail, blocks: deps.blocks, refusals: deps.refusals, now }) } : {}),
    ...(config.mailtm.api
      ? {
          mailtm: createMailtmService({
            store,
            mail,
            secret: deps.secrets.jwtSecret,
            quotaBytes: config.mail.addressMaxBytes,
            mailTtlMs: config.mail.mailTtlMs,
            addressTtlMs: config.mail.addressTtlMs,
            loginGuard: createLoginGuard(config.limits.mailtmLogin, redis, prefix),
            now,
          }),
        }
      : {}),
  });
}
