// The mail side of the service: parser, authentication checks, the operators' blocks,
// the webhook dispatcher and the mail service that delivers through them.
import type { Logger } from 'pino';
import { createBlockList, type BlockList } from '../blocks/block-list.js';
import type { Config } from '../config/index.js';
import { foldName } from '../domain/names.js';
import { createTokens } from '../domain/tokens.js';
import { createTombstones } from '../domain/tombstones.js';
import { createMailAuthenticator } from '../mail/auth/auth.js';
import type { EventBus } from '../mail/events/events.js';
import { createMessageParser } from '../mail/parse/parse.js';
import { createDomainPool } from '../mail/domain-pool.js';
import { createMailService, type MailService } from '../mail/service.js';
import type { Metrics } from '../observability/metrics.js';
import { SESSION_LIFETIME_SECONDS } from '../sessions/service.js';
import type { VersionedStore } from '../storage/caching-store.js';
import { createDispatcher, exponentialBackoff, type WebhookTuning } from '../webhooks/dispatcher.js';
import { dnsLookup } from '../webhooks/guard.js';
import type { ReportService } from '../report/service.js';
import { scanMessage } from '../report/spam-scanner.js';
import { createRefusalCounts, type RefusalCounts } from '../mail/refusal-counts.js';
import type { SpamCheck } from '../mail/spam-check.js';
import { buildReport } from './report.js';

/** Webhook delivery: 5 s per attempt, retries for 24 h, 16 attempts in flight per node, a 60 s lease (docs/decisions.md "Webhooks"). */
const WEBHOOK_DEFAULTS = {
  timeoutMs: 5000,
  retryForMs: 24 * 3_600_000,
  concurrency: 16,
  leaseMs: 60_000,
  pollMs: 1000,
  keepAttemptsMs: 7 * 86_400_000,
} as const;

export interface MailPartsDeps {
  store: VersionedStore;
  bus: EventBus;
  jwtSecret: string;
  logger: Logger;
  metrics: Metrics | undefined;
  now: () => number;
  /** Tests shorten webhook delivery's timings and give it a resolver. */
  webhooks: Partial<WebhookTuning> | undefined;
  /** Tests give the random names of new addresses (default: domain/names.ts). */
  randomName?: (() => string) | undefined;
  /** Each part's close, run first to last at stop (the first added runs last). */
  onStop(close: () => Promise<unknown>): void;
}

export interface MailParts {
  mail: MailService;
  blocks: BlockList;
  webhookTuning: WebhookTuning;
  /** The deliverability report, which with SPAM_SCANNER is also built after each arrival. */
  report: ReportService;
  /** Every SMTP refusal counted by reason (the metric and the hourly counts of GET /api/admin/refusals). */
  refusals: RefusalCounts;
}

export function buildMail(config: Pick<Config, 'mail' | 'parse' | 'mailAuth' | 'smtp' | 'webhooks' | 'report'>, deps: MailPartsDeps): MailParts {
  const { store, logger, metrics, now } = deps;
  const parser = createMessageParser(config.parse);
  deps.onStop(() => parser.close());
  const { dnsServers } = config.mailAuth;
  const authenticator = config.mailAuth.checks
    ? createMailAuthenticator({
        dnsServers,
        mta: config.smtp.hostname,
        cpuMs: config.parse.timeoutMs,
        onDnsSilence: (silent) => {
          metrics?.authDnsSilent(silent);
          if (silent) logger.warn({ dnsServers: dnsServers ?? 'system' }, 'the DNS servers answer nothing: authentication look-ups give temperror at once until they answer again (asked every 5 s)');
          else logger.info('the DNS servers answer again: authentication look-ups resumed');
        },
      })
    : undefined;
  if (authenticator) deps.onStop(() => authenticator.close());
  // The operators' blocks, refused at SMTP MAIL FROM; read from the database, so every node honours them.
  const blocks = createBlockList(store, { logger });
  // Webhooks: the mail service queues each mail's deliveries in its own transaction and
  // wakes this node's dispatcher, which sends them; stopped before the store closes.
  const webhookTuning: WebhookTuning = { ...WEBHOOK_DEFAULTS, backoff: exponentialBackoff(), timeoutHold: exponentialBackoff(30_000, 1_800_000), lookup: dnsLookup(), ...deps.webhooks };
  const { url, secret, allowPrivate } = config.webhooks;
  const operator = url && secret ? { url, secret } : undefined;
  const dispatcher = createDispatcher({ ...webhookTuning, store, logger, metrics, now, allowPrivate, operator });
  deps.onStop(() => dispatcher.stop());
  // Reports read the mail through the mail service, which hands them its arrivals.
  let mailService: MailService | undefined;
  const { report, arrivals } = buildReport(config, { store, mail: () => mailService!, lookup: webhookTuning.lookup, wakeDeliveries: () => dispatcher.wake(), logger, now });
  // Closed before the dispatcher and the parser: the reports under way finish first.
  if (arrivals) deps.onStop(() => arrivals.close());
  const m = config.mail;
  // The domain pool is the database's, so every node follows its changes (server.ts seeds it).
  const pool = createDomainPool(store, { selection: m.domainSelection, retireGraceMs: m.domainRetireGraceMs, logger, now });
  const refusals = createRefusalCounts({ store, metrics, logger, now, countedUnder: (domain) => pool.poolDomainOf(domain) });
  // Added after the SMTP receiver is (it is stopped first): its last refusals are written before the store closes.
  deps.onStop(() => refusals.close());
  const spamCheck = spamRefusal(config.report, logger);
  const mail = createMailService({
    blocks,
    parser,
    authenticator,
    quota: { maxMails: m.addressMaxMails, maxBytes: m.addressMaxBytes },
    tokenMaxLength: m.jwtMaxLength,
    plusAddressing: m.plusAddressing,
    catchAll: m.catchAll,
    bus: deps.bus,
    store,
    tokens: createTokens(deps.jwtSecret),
    names: { customNames: m.customNames, blocklist: new Set(m.nameBlocklist.map(foldName)) },
    pool,
    mailTtlMs: m.mailTtlMs,
    addressTtlMs: m.addressTtlMs,
    tombstones: createTombstones(deps.jwtSecret, m.addressTombstoneTtlMs),
    randomName: deps.randomName,
    attachmentPolicy: { maxBytes: m.attachmentMaxBytes, refusedExtensions: new Set(m.attachmentRefusedExtensions), refuseExecutables: m.attachmentRefuseExecutables },
    sessionTtlMs: SESSION_LIFETIME_SECONDS * 1000,
    outbox: { operator: operator !== undefined, queued: () => dispatcher.wake() },
    ...(arrivals ? { arrivals } : {}),
    ...(spamCheck ? { spamCheck } : {}),
    parsedViews: { perClient: config.parse.viewsPerClient, total: config.parse.viewsWaiting },
    onKeepError: (err) => logger.warn({ err }, 'the degraded parsed view of a mail could not be kept'),
    now,
  });
  mailService = mail;
  return { mail, blocks, webhookTuning, report, refusals };
}

/**
 * SPAM_REFUSE_SCORE: the scanner asked before the 250, within SPAM_SCANNER_TIMEOUT; no score
 * in time (slow, down, too large to send) takes the mail. Without a scanner it does nothing, and says so.
 */
function spamRefusal(r: Config['report'], logger: Logger): SpamCheck | undefined {
  if (r.refuseScore === undefined) return undefined;
  const target = r.scanner;
  if (!target) {
    logger.warn({ refuseScore: r.refuseScore }, 'SPAM_REFUSE_SCORE has no effect without SPAM_SCANNER: no mail is refused for its spam score');
    return undefined;
  }
  logger.info({ refuseScore: r.refuseScore, scanner: target.kind }, 'mail scoring at or over SPAM_REFUSE_SCORE is refused at DATA');
  return {
    refuseScore: r.refuseScore,
    async scan(raw, envelope) {
      const section = await scanMessage(target, raw, { timeoutMs: r.scanTimeoutMs, maxBytes: r.scanMaxBytes, envelope });
      if (section.score === null) logger.debug({ reason: section.reason }, 'no spam score before the 250: the mail is taken');
      return section;
    },
  };
}
