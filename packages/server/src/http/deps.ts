// What the HTTP app is built from, passed in explicitly (no module state). In a
// file of its own so that the routes, which need it, never import the app that
// imports them.
import type { Logger } from 'pino';
import type { AdminService } from '../admin/service.js';
import type { Challenge } from '../challenge/challenge.js';
import type { Config } from '../config/index.js';
import type { EventBus } from '../mail/events/events.js';
import type { MailService } from '../mail/service.js';
import type { MailtmService } from '../mailtm/service.js';
import type { Metrics } from '../observability/metrics.js';
import type { ReportService } from '../report/service.js';
import type { SessionService } from '../sessions/service.js';
import type { StorageState } from '../storage/storage-state.js';
import type { Store } from '../storage/store.js';
import type { WebhookService } from '../webhooks/service.js';
import type { SandboxService } from '../sandboxes/types.js';
import type { RateLimiter } from './rate-limit.js';

export interface HttpDeps {
  /** The sections the app and its routes read: its own, and those of the features it serves. */
  config: Pick<Config, 'http' | 'events' | 'mail' | 'challenge' | 'admin' | 'metrics' | 'mcp' | 'smtp' | 'mailAuth'>;
  sessionSecret: string;
  store: Store;
  /** Whether the store can take more (/health_check; told of writes that failed for lack of space). */
  storage?: StorageState;
  mail: MailService;
  bus: EventBus;
  sessions: SessionService;
  /** The deliverability report (GET /api/mail/{uuid}/report). */
  report: ReportService;
  challenge: Challenge;
  /** The address's webhook (PUT /api/webhook). */
  webhooks: WebhookService;
  limiter: RateLimiter;
  logger: Logger;
  /** Present when METRICS_TOKEN is set. */
  metrics?: Metrics;
  /** The mail.tm-compatible API's accounts; absent when MAILTM_API=off (no /mailtm routes). */
  mailtm?: MailtmService;
  /** The operators' admin; its routes and page exist only when ADMIN_TOKEN is set too. */
  admin?: AdminService;
  /** The sandboxes (SMTP AUTH logins): the Mailpit- and MailHog-compatible APIs read their mail. */
  sandboxes?: SandboxService;
}
