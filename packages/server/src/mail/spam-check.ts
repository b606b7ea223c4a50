// Refusal over a spam score at DATA (SPAM_REFUSE_SCORE, docs/operating.md "Abuse controls"):
// with a scanner configured, a message is scored before its 250, beside its parse, and one
// scoring at or over the score is refused whole (554 5.7.1), nothing stored. The scan is
// bounded by SPAM_SCANNER_TIMEOUT; a scanner that is slow, down or gives no score lets the
// message through: a broken filter must not turn a disposable inbox's mail away.
import type { SpamSection } from '@temp-inbox/api';
import { AppError } from '../domain/errors.js';

/** What the SMTP envelope tells the scanner (its own checks use the client and the sender). */
export interface SpamEnvelope {
  ip?: string | undefined;
  helo?: string | undefined;
  from?: string | undefined;
  rcpt?: string | undefined;
}

/** The scanner as delivery asks it (assembly/mail.ts wires report/spam-scanner.ts in). */
export interface SpamCheck {
  /** SPAM_REFUSE_SCORE: refused at or over it. */
  refuseScore: number;
  /** The scanner's section of the message (its score null when it gave none: time-out, failure, too large to send); its report on arrival reuses it. */
  scan(raw: Buffer, envelope: SpamEnvelope): Promise<SpamSection>;
}

/** A message refused for its spam score; SMTP answers 554 5.7.1 with its message. */
export class SpamRefusedError extends AppError {
  constructor(
    readonly score: number,
    readonly refuseScore: number,
  ) {
    super('unsupported_media_type', `Message refused as spam: it scored ${score}, and this server refuses mail scoring ${refuseScore} or more`);
  }
}

/** The refusal of a message with this scan, or undefined when it may be stored. */
export function spamRefusalOf(check: SpamCheck | undefined, spam: SpamSection | undefined): SpamRefusedError | undefined {
  const score = spam?.score;
  return check && typeof score === 'number' && score >= check.refuseScore ? new SpamRefusedError(score, check.refuseScore) : undefined;
}
