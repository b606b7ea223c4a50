// Prometheus metrics (docs/decisions.md "Beyond the interface"), served at GET /metrics when
// METRICS_TOKEN is set; nothing is counted when it is not. Each server has its own
// registry, so several in one process (tests) do not mix their counts.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { REFUSAL_REASONS, type RefusalReason } from '../domain/refusal-reasons.js';

/** refused: by the attachment policy (552) or for a spam score (554). deferred: answered 4xx by a limit (the in-flight budget or the client's share of it, bytes per client and window or day, the minimum DATA rate). */
export type SmtpOutcome = 'stored' | 'too_large' | 'failed' | 'deferred' | 'refused';

/**
 * A read answered from stored mail (http/response-cache.ts): hit, the bytes kept for the
 * address's current mail-set version; miss, built (and kept); off, the store cannot tell
 * versions (PostgreSQL), so nothing is reused.
 */
export type ReuseOutcome = 'hit' | 'miss' | 'off';

export interface Metrics {
  registry: Registry;
  /** One finished HTTP request: its route template ("/api/mail/:uuid"), status and duration. */
  request(method: string, route: string, status: number, seconds: number): void;
  /** One SMTP DATA: stored (and how many copies), refused as too large, or failed. */
  smtpMessage(outcome: SmtpOutcome, copies?: number): void;
  /** One message refused at DATA by the attachment policy (552 5.3.4 or 552 5.7.0), by why. */
  smtpAttachmentRefused(reason: 'size' | 'extension' | 'content'): void;
  /** One RCPT refused with 550 (no such mailbox). */
  smtpRecipientRefused(): void;
  /** One SMTP connection refused at accept (per-client cap). */
  smtpConnectionRefused(): void;
  /** One SMTP AUTH (sandbox login): ok, wrong credentials (535), or refused by the lock-out (421). */
  smtpAuth(outcome: 'ok' | 'wrong' | 'locked'): void;
  /** One MAIL FROM refused with 550 5.7.1 by an operator's block of this kind. */
  smtpSenderBlocked(kind: 'sender' | 'domain' | 'ip'): void;
  /** One SMTP refusal, by reason (domain/refusal-reasons.ts). */
  smtpRefusal(reason: RefusalReason): void;
  /** Reports what is open when scraped. */
  trackOpen(read: () => { streams: number; waits: number }): void;
  /** One list page, mail or parsed mail answered (route template), reused or built. */
  responseReuse(route: string, outcome: ReuseOutcome): void;
  /** One webhook delivery attempt: to an address's webhook or the operator's WEBHOOK_URL, and how it ended. */
  webhookAttempt(hook: 'address' | 'operator', outcome: 'delivered' | 'failed' | 'gave_up'): void;
  /** The authentication checks' resolvers were found to answer nothing (true), or answer again (false). */
  authDnsSilent(silent: boolean): void;
}

export function createMetrics(storeKind: string): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'temp_inbox_' });
  const requests = new Counter({
    name: 'temp_inbox_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'temp_inbox_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template (event streams and waits excluded).',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const messages = new Counter({
    name: 'temp_inbox_smtp_messages_total',
    help: 'SMTP messages by outcome: stored (250), too_large (552), failed (451), deferred (452 or 421 from a limit), refused (552 by the attachment policy, 554 for a spam score).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attachmentsRefused = new Counter({
    name: 'temp_inbox_smtp_attachments_refused_total',
    help: 'SMTP messages refused at DATA by the attachment policy, by reason: size (ATTACHMENT_MAX_BYTES), extension (ATTACHMENT_REFUSED_EXTENSIONS), content (an executable, ATTACHMENT_REFUSE_EXECUTABLES).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const stored = new Counter({ name: 'temp_inbox_mails_stored_total', help: 'Mails stored (one per recipient address of a message).', registers: [registry] });
  const connectionsRefused = new Counter({
    name: 'temp_inbox_smtp_connections_refused_total',
    help: 'SMTP connections refused when accepted: the client already had SMTP_MAX_CLIENTS_PER_IP open.',
    registers: [registry],
  });
  const logins = new Counter({
    name: 'temp_inbox_smtp_auth_total',
    help: 'SMTP AUTH attempts (sandbox logins) by outcome: ok, wrong (535 5.7.8), locked (421: too many failures from the client or for the login).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of ['ok', 'wrong', 'locked'] as const) logins.inc({ outcome }, 0);
  const refused = new Counter({ name: 'temp_inbox_smtp_recipients_refused_total', help: 'RCPT TO refused with 550 (no such mailbox here).', registers: [registry] });
  const blocked = new Counter({
    name: 'temp_inbox_smtp_senders_blocked_total',
    help: 'MAIL FROM refused with 550 5.7.1 by an operator\'s block, by the kind of block: sender, domain or ip.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'temp_inbox_smtp_refusals_total',
    help: 'SMTP refusals (a 4xx or 5xx reply that turns mail away), by reason; docs/operating.md "Abuse controls" lists the reasons.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  new Gauge({ name: 'temp_inbox_store_info', help: 'The storage backend in use.', labelNames: ['store'] as const, registers: [registry] }).set({ store: storeKind }, 1);
  let openReader: (() => { streams: number; waits: number }) | undefined;
  const open = new Gauge({
    name: 'temp_inbox_push_open',
    help: 'Open GET /api/events streams and GET /api/mails/wait requests.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const now = openReader?.() ?? { streams: 0, waits: 0 };
      this.set({ kind: 'events' }, now.streams);
      this.set({ kind: 'wait' }, now.waits);
    },
  });
  void open;
  const reuse = new Counter({
    name: 'temp_inbox_http_responses_reused_total',
    help: 'Read answers built from stored mail, by route template and outcome: hit (reused bytes), miss (built), off (the store cannot tell when mail changed).',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
  });
  const webhooks = new Counter({
    name: 'temp_inbox_webhook_attempts_total',
    help: "Webhook delivery attempts, by hook (an address's own, or the operator's WEBHOOK_URL) and outcome: delivered (2xx), failed (to be retried), gave_up (failed, retries over).",
    labelNames: ['hook', 'outcome'] as const,
    registers: [registry],
  });
  const dnsSilent = new Gauge({
    name: 'temp_inbox_auth_dns_silent',
    help: '1 while the DNS servers of the authentication checks answer nothing at all (their look-ups then fail at once with temperror), else 0.',
    registers: [registry],
  });
  dnsSilent.set(0);
  // Pre-create the outcome series, so that a rate over them starts at 0.
  for (const outcome of ['stored', 'too_large', 'failed'] as const) messages.inc({ outcome }, 0);
  for (const reason of ['size', 'extension', 'content'] as const) attachmentsRefused.inc({ reason }, 0);
  for (const reason of REFUSAL_REASONS) refusals.inc({ reason }, 0);
  for (const hook of ['address', 'operator'] as const) for (const outcome of ['delivered', 'failed', 'gave_up'] as const) webhooks.inc({ hook, outcome }, 0);

  const LONG_LIVED = new Set(['/api/events', '/api/mails/wait']);
  return {
    registry,
    request(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      if (!LONG_LIVED.has(route)) durations.observe({ route }, seconds);
    },
    smtpMessage(outcome, copies = 0) {
      messages.inc({ outcome });
      if (copies) stored.inc(copies);
    },
    smtpAttachmentRefused: (reason) => attachmentsRefused.inc({ reason }),
    smtpRecipientRefused: () => refused.inc(),
    smtpConnectionRefused: () => connectionsRefused.inc(),
    smtpAuth: (outcome) => logins.inc({ outcome }),
    smtpSenderBlocked: (kind) => blocked.inc({ kind }),
    smtpRefusal: (reason) => refusals.inc({ reason }),
    trackOpen(read) {
      openReader = read;
    },
    responseReuse: (route, outcome) => reuse.inc({ route, outcome }),
    webhookAttempt: (hook, outcome) => webhooks.inc({ hook, outcome }),
    authDnsSilent: (silent) => dnsSilent.set(silent ? 1 : 0),
  };
}
