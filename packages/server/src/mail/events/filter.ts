// Server-side filters of waits and event streams (GET /api/mails/wait, GET /api/events;
// docs/api.md): `from`, `to` and `subject`, each a case-insensitive substring of what
// the mail's metadata says. Pure.
import type { MailMetadata } from '@temp-inbox/api';
import type { MailSummary } from '../../storage/store.js';

export interface MailFilterSpec {
  /** The From: name or address contains it. */
  from?: string | undefined;
  /**
   * A To: recipient's name or address, or the address the mail was sent to (delivered_to),
   * contains it; for a sandbox's mail also any envelope recipient (Cc and Bcc ones too).
   */
  to?: string | undefined;
  /** The subject contains it. */
  subject?: string | undefined;
}

export type MailFilter = (mail: Pick<MailSummary, 'metadata' | 'envelope'>) => boolean;

/** A predicate over mails, or undefined when nothing is filtered (no filter given, or only empty ones). */
export function mailFilter(spec: MailFilterSpec): MailFilter | undefined {
  const from = spec.from?.toLowerCase();
  const to = spec.to?.toLowerCase();
  const subject = spec.subject?.toLowerCase();
  if (!from && !to && !subject) return undefined;
  const has = (value: string, needle: string) => value.toLowerCase().includes(needle);
  return (mail) => {
    let m: MailMetadata;
    try {
      m = JSON.parse(mail.metadata) as MailMetadata;
    } catch {
      return false;
    }
    if (subject && !has(m.subject, subject)) return false;
    if (from && !has(m.from.name, from) && !has(m.from.address, from)) return false;
    if (
      to &&
      !m.to.some((r) => has(r.name, to) || has(r.address, to)) &&
      !(m.delivered_to !== undefined && has(m.delivered_to, to)) &&
      !mail.envelope?.to.some((r) => has(r, to))
    ) {
      return false;
    }
    return true;
  };
}
