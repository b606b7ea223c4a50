// What the receiver's hooks (mail-from.ts, rcpt-to.ts, data.ts) share: its options, the
// mail service, the per-client limits and budget, the sessions' state and the sink.
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { FastifyBaseLogger } from 'fastify';
import type { CountRefusal } from '../mail/refusal-counts.js';
import type { MailService, Recipient } from '../mail/service.js';
import type { Metrics } from '../observability/metrics.js';
import type { SmtpAuthOptions } from './auth.js';
import type { ClientLimits } from './client-limits.js';
import type { InflightBudget } from './inflight-budget.js';
import type { SessionStates } from './session-state.js';
import type { Sink } from './sink.js';
import type { SmtpOptions } from './options.js';

export interface HookContext {
  opts: SmtpOptions;
  mail: MailService;
  log: FastifyBaseLogger;
  metrics: Metrics | undefined;
  budget: InflightBudget;
  clients: ClientLimits;
  states: SessionStates;
  auth: SmtpAuthOptions | undefined;
  sink: Sink | undefined;
  /** What each accepted RCPT resolved to, so DATA stores without a second look-up. */
  resolved: WeakMap<SMTPServerAddress, Recipient>;
  /** Ends a session from outside its command flow with a reply and closes the connection (421 closes it by itself). */
  closeSession(session: SMTPServerSession, message: string, code?: number): void;
  /** Counts one refusal by reason and recipient domain (undefined before any recipient); the pool's retired-domain refusal calls it too. */
  countRefusal: CountRefusal;
}
