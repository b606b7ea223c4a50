// What the SMTP receiver is given (smtp-receiver.ts), in a file of its own so that the
// hooks' shared context (hook-context.ts) can name it without importing the receiver.
import type { SmtpConfig } from '../config/index.js';
import type { CountRefusal } from '../mail/refusal-counts.js';
import type { SmtpLogin } from './auth.js';
import type { SmtpLimits, StorageGate } from './client-limits.js';

/**
 * The receiver's own configuration section (config/config.ts SmtpConfig: listeners, per-client
 * caps, timeouts, sizes) and what it is given besides: the message size, the per-client windows,
 * the store's disk and the logins of SMTP AUTH.
 */
export interface SmtpOptions extends SmtpConfig {
  /** MAX_MESSAGE_BYTES: SIZE, and the largest message taken. */
  maxMessageBytes: number;
  /** Per client and window (client-limits.ts); absent = no limit. */
  limits: SmtpLimits;
  /** The store's free space (DISK_MIN_FREE): not 'ok', MAIL FROM gets 452 4.3.1; a delivery that failed is told. */
  storage?: StorageGate | undefined;
  /** The logins SMTP AUTH is offered for, in sink mode (auth.ts); absent: AUTH is never offered. */
  login?: SmtpLogin | undefined;
  /** ABUSE_CONTACT: named in the policy refusals' texts (550 5.7.1, 552 5.7.0, 554 5.7.1); absent: none. */
  abuseContact?: string | undefined;
  /** Counts each refusal by reason (mail/refusal-counts.ts); absent: none is counted. */
  countRefusal?: CountRefusal | undefined;
}
