// The SMTP receiver from its section, the per-client windows of the limits section,
// and the sandboxes' logins for SMTP AUTH.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { defaultClientInflightBytes, type Config } from '../config/index.js';
import { createWindowLimiter } from '../limits/window-limiter.js';
import type { CountRefusal } from '../mail/refusal-counts.js';
import type { MailService } from '../mail/service.js';
import type { Metrics } from '../observability/metrics.js';
import type { SandboxesService } from '../sandboxes/service.js';
import type { SmtpLogin } from '../smtp/auth.js';
import type { SmtpLimits, StorageGate } from '../smtp/client-limits.js';
import { createSmtpReceiver, type SmtpReceiver } from '../smtp/smtp-receiver.js';

export interface SmtpPartsDeps {
  redis: Redis | undefined;
  storage: StorageGate;
  sandboxes: SandboxesService;
  mail: MailService;
  logger: Logger;
  metrics: Metrics | undefined;
  /** Counts each SMTP refusal by reason (mail/refusal-counts.ts). */
  countRefusal: CountRefusal;
}

export function buildSmtp(config: Pick<Config, 'smtp' | 'mail' | 'limits' | 'redis'>, deps: SmtpPartsDeps): SmtpReceiver {
  const { smtp, mail } = config;
  return createSmtpReceiver(
    {
      ...smtp,
      // loadConfig resolves SMTP_CLIENT_INFLIGHT_BYTES; a configuration built otherwise may leave it 0.
      clientInflightBytes: smtp.clientInflightBytes || defaultClientInflightBytes(smtp, mail.maxMessageBytes),
      maxMessageBytes: mail.maxMessageBytes,
      limits: smtpLimits(config, deps.redis),
      storage: deps.storage,
      login: sandboxLogin(deps.sandboxes),
      abuseContact: mail.abuseContact,
      countRefusal: deps.countRefusal,
    },
    deps.mail,
    deps.logger,
    deps.metrics,
  );
}

/** SMTP_RATE_*, SMTP_DAILY_BYTES and SENDER_DOMAIN_RATE_LIMIT, counted through Redis when it is configured. */
function smtpLimits(config: Pick<Config, 'mail' | 'limits' | 'redis'>, redis: Redis | undefined): SmtpLimits {
  const rules = config.limits.smtp;
  const prefix = config.redis.keyPrefix;
  return {
    messages: createWindowLimiter('SMTP_MESSAGES', rules.messages, redis, prefix),
    recipients: createWindowLimiter('SMTP_RECIPIENTS', rules.recipients, redis, prefix),
    bytes: createWindowLimiter('SMTP_BYTES', rules.bytes, redis, prefix),
    newAddresses: config.mail.catchAll ? createWindowLimiter('SMTP_NEW_ADDRESSES', rules.newAddresses, redis, prefix) : undefined,
    // A day's budget is found again by a retrying sender once the day is over: no block is re-armed by a refusal.
    dailyBytes: createWindowLimiter('SMTP_DAILY_BYTES', { max: rules.dailyBytes, windowSeconds: 86_400 }, redis, prefix, { rearm: false }),
    // Per sending domain, not per client: many clients of one domain share its window. Not re-armed by a
    // refusal, so one sender that keeps retrying cannot keep a busy domain's other senders out.
    senderDomain: createWindowLimiter('SENDER_DOMAIN_RATE_LIMIT', rules.senderDomain, redis, prefix, { rearm: false }),
  };
}

/** The sandboxes as the logins SMTP AUTH offers (smtp/auth.ts declares what it needs of them). */
function sandboxLogin(sandboxes: SandboxesService): SmtpLogin {
  return {
    offered: () => sandboxes.offered(),
    async login(name, password, client) {
      const r = await sandboxes.login(name, password, client);
      return r.ok ? { ok: true, account: r.sandbox } : r;
    },
    current: (account) => sandboxes.current(account.id),
    async capture(account, m) {
      await sandboxes.capture(account, m.message, { from: m.sender, to: m.recipients }, m.client, m.trace);
    },
  };
}
