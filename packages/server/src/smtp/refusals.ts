// Refusals as SMTP answers them and the refusal counts count them (mail/refusal-counts.ts):
// each refusal's reply carries its reason, so the hook that sends it counts it once; the
// policy refusals (5.7.x) name the operator's ABUSE_CONTACT.
import type { RefusalReason } from '../mail/refusal-counts.js';
import { reply, type SmtpError } from './replies.js';

export type RefusalReply = SmtpError & { refusalReason?: RefusalReason };

/** A reply for a smtp-server callback that is a refusal of `reason`. */
export function refusalReply(reason: RefusalReason, code: number, enhanced: string, message: string): RefusalReply {
  return Object.assign(reply(code, enhanced, message), { refusalReason: reason });
}

/** A refusal's text with "; report abuse to <contact>" when the operator set ABUSE_CONTACT. */
export function withAbuseContact(text: string, contact: string | undefined): string {
  return contact ? `${text}; report abuse to ${contact}` : text;
}

/** The reason a reply carries, if it is a counted refusal. */
export function reasonOf(err: unknown): RefusalReason | undefined {
  return err instanceof Error ? (err as RefusalReply).refusalReason : undefined;
}
