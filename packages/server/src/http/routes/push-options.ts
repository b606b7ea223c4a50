// What the push routes (push.ts) share: the mails newer than a client's last one, the
// filters' check and the error answers their schemas declare.
import { MAX_FILTER_CHARS } from '@temp-inbox/api';
import type { MailFilter } from '../../mail/events/filter.js';
import type { MailSummary } from '../../storage/store.js';
import type { HttpDeps } from '../deps.js';
import { errorResponse } from '../errors.js';
import { boundedStrings } from '../query.js';
import type { StreamAdmission } from '../stream-admission.js';

export interface PushRouteOptions {
  deps: HttpDeps;
  /** What is open, per client, per address and in all (EVENTS_PER_*). */
  streams: StreamAdmission;
}

/** Mails replayed or answered at most (the newest ones). */
const NEWER_MAX = 100;

export const bearer = [{ bearer: [] }];
export const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
export const tooMany = errorResponse('Rate limit exceeded, or too many streams and waits open from this client; see Retry-After.');
export const badQuery = errorResponse(`since and timeout must be whole numbers in range; from, to and subject at most ${MAX_FILTER_CHARS} characters, each given once.`);
export const filters = boundedStrings(MAX_FILTER_CHARS, 'from', 'to', 'subject');

/** The address's live mails with an id above `since` that `match` accepts (among the newest NEWER_MAX), and its count of live mails. */
export async function newer(mail: HttpDeps['mail'], addressId: number, since: number, match: MailFilter | undefined): Promise<{ results: MailSummary[]; count: number }> {
  const page = await mail.listMails(addressId, NEWER_MAX, 0);
  return { results: page.results.filter((m) => m.id > since && (!match || match(m))), count: page.count };
}
