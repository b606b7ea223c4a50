// The link check of a report (?links=check, never on arrival): each listed URL asked with
// HEAD (GET where HEAD is refused) through the same address guard as webhooks
// (webhooks/guard.ts: public addresses only, the connection pinned to the checked ones;
// its refusals, asked `as: 'link'`, speak of links),
// following no redirect, reading no body, within a deadline per link and for the whole
// check. A link whose fetch could change something (unsubscribe, confirm, …) is never
// fetched.
import type { LinkEntry } from '@temp-inbox/api';
import { parseWebhookUrl, WebhookUrlError } from '../domain/webhook-url.js';
import { resolveTarget, WebhookRefusedError, type Lookup } from '../webhooks/guard.js';
import { postWebhook } from '../webhooks/sender.js';

export interface LinkCheckOptions {
  allowPrivate: boolean;
  lookup: Lookup;
  /** Per link, look-up included. */
  timeoutMs: number;
  /** For the whole check: links not started by then are `skipped`. */
  totalMs: number;
  /** The most links fetched for one report; the rest are `skipped`. */
  maxLinks: number;
  concurrency: number;
}

export const LINK_CHECK_DEFAULTS = { timeoutMs: 5000, totalMs: 20_000, maxLinks: 50, concurrency: 4 } as const;

/** What a link that acts when it is opened looks like: these are listed, never fetched. */
const ACTING = /unsub|opt-?out|confirm|verif|activat|validat|approve|accept|declin|cancel|delete|remove|revoke|reset|magic|sign-?in|log-?in|one-?click|token=|action=/i;

const USER_AGENT = 'temp-inbox-link-check/1';

async function fetchOnce(url: URL, method: 'HEAD' | 'GET', opts: LinkCheckOptions, deadline: number) {
  const target = parseWebhookUrl(url.href, 'link');
  const addresses = await resolveTarget(target, { as: 'link', allowPrivate: opts.allowPrivate, lookup: opts.lookup, timeoutMs: Math.max(1, deadline - performance.now()) });
  return postWebhook({ url, addresses, headers: { accept: '*/*' }, body: '', method, userAgent: USER_AGENT, timeoutMs: Math.max(1, deadline - performance.now()) });
}

async function checkOne(entry: LinkEntry, opts: LinkCheckOptions): Promise<LinkEntry> {
  const href = entry.url.replace(/#.*$/s, '');
  const deadline = performance.now() + opts.timeoutMs;
  try {
    const url = new URL(href);
    let result = await fetchOnce(url, 'HEAD', opts, deadline);
    if (result.status === 405 || result.status === 501) result = await fetchOnce(url, 'GET', opts, deadline);
    const status = result.status;
    if (status === null) return { ...entry, result: 'error', status: null, reason: result.error ?? 'No answer.' };
    if (status >= 200 && status < 300) return { ...entry, result: 'ok', status };
    if (status >= 300 && status < 400) return { ...entry, result: 'redirect', status, reason: `Answered ${status}, a redirect (not followed).` };
    return { ...entry, result: 'broken', status, reason: `Answered ${status}.` };
  } catch (err) {
    if (err instanceof WebhookRefusedError || err instanceof WebhookUrlError) return { ...entry, result: 'refused', status: null, reason: err.message };
    if (err instanceof TypeError) return { ...entry, result: 'refused', status: null, reason: 'The link is not a valid URL.' };
    throw err;
  }
}

/** Each link with its result, in the order given. `acting`: URLs known to act (List-Unsubscribe's), never fetched. */
export async function checkLinks(links: readonly LinkEntry[], acting: ReadonlySet<string>, opts: LinkCheckOptions): Promise<LinkEntry[]> {
  const out: LinkEntry[] = links.map((l) => ({ ...l }));
  const todo: number[] = [];
  out.forEach((l, i) => {
    if (acting.has(l.url) || ACTING.test(l.url)) out[i] = { ...l, result: 'skipped', status: null, reason: 'Never fetched: opening it could change something (unsubscribe, confirm, sign in).' };
    else if (todo.length >= opts.maxLinks) out[i] = { ...l, result: 'skipped', status: null, reason: `Past the ${opts.maxLinks} links one report checks.` };
    else todo.push(i);
  });
  const stopAt = performance.now() + opts.totalMs;
  const worker = async () => {
    for (let i = todo.shift(); i !== undefined; i = todo.shift()) {
      if (performance.now() >= stopAt) {
        out[i] = { ...out[i]!, result: 'skipped', status: null, reason: `Past the ${opts.totalMs / 1000} s one report's link check may take.` };
        continue;
      }
      out[i] = await checkOne(out[i]!, opts);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return out;
}
