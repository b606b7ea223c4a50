// What a webhook URL may look like (docs/security.md "Webhooks"): checked when an owner
// sets one (PUT /api/webhook), when the operator's WEBHOOK_URL is read, and again before
// every delivery. Where it may point is guard.ts's business; this is the URL's form only.
import { isIPv4 } from 'node:net';
import { MAX_WEBHOOK_URL_CHARS } from '@temp-inbox/api';

/**
 * The ports the Fetch Standard's "bad port" list forbids browsers to fetch from
 * (https://fetch.spec.whatwg.org/#port-blocking): mail, shell, file, name and chat
 * services that an HTTP POST must not be aimed at. Every other port is allowed: webhook
 * receivers often listen on 8080, 8443 or 3000, and the address guard, not the port,
 * keeps requests off private networks.
 */
export const BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161,
  179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060,
  5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * What a checked URL is fetched for: a webhook (POSTed to) or a report's link (asked with
 * HEAD). The form's and the guard's refusals name it, so a link's reason never speaks of
 * webhooks.
 */
export type FetchedAs = 'webhook' | 'link';

/** How each refusal names the URL, its host and the rule (guard.ts uses them too). */
export const FETCHED_WORDS: Record<FetchedAs, { url: string; host: string; rule: string }> = {
  webhook: { url: 'The webhook URL', host: 'The webhook host', rule: 'webhooks are only sent to public addresses' },
  link: { url: 'The link', host: "The link's host", rule: 'links are only fetched from public addresses' },
};

/** A URL refused for its form; the message is a sentence fit for a 400 (it never repeats the URL). */
export class WebhookUrlError extends Error {
  override name = 'WebhookUrlError';
}

export interface WebhookTarget {
  url: URL;
  /** The host as DNS knows it: a name (lower case, no trailing dot), or an IP without brackets. */
  host: string;
  /** The host when it is an IP address literal (IPv4 dotted, IPv6 without brackets). */
  ip: string | undefined;
  port: number;
}

/** Parses and checks a webhook URL's form (or a link's, `as`); throws WebhookUrlError with the reason. */
export function parseWebhookUrl(raw: string, as: FetchedAs = 'webhook'): WebhookTarget {
  const the = FETCHED_WORDS[as].url;
  if (raw.length > MAX_WEBHOOK_URL_CHARS) throw new WebhookUrlError(`${the} is longer than ${MAX_WEBHOOK_URL_CHARS} characters.`);
  // The URL parser drops tabs and line breaks anywhere and spaces at the ends: a URL that
  // needed them removed is not the URL its owner meant.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(raw)) throw new WebhookUrlError(`${the} must not contain spaces or control characters.`);
  if (!URL.canParse(raw)) throw new WebhookUrlError(`${the} is not a valid absolute URL.`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlError(`${the} must start with http:// or https://.`);
  // Credentials in a URL end up in logs and in GET /api/webhook; a receiver that needs a
  // secret can verify the signature, or take a token in the path or query.
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError(`${the} must not contain a user name or password.`);
  if (raw.includes('#')) throw new WebhookUrlError(`${the} must not contain a fragment (#…): it is never sent.`);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (BLOCKED_PORTS.has(port)) throw new WebhookUrlError(`${the}'s port ${port} is one browsers refuse to fetch from (mail, shell and similar services); use another port.`);
  let host = url.hostname;
  let ip: string | undefined;
  if (host.startsWith('[')) ip = host = host.slice(1, -1);
  else if (isIPv4(host)) ip = host;
  else host = host.replace(/\.$/, '');
  if (host === '') throw new WebhookUrlError(`${the} has no host.`);
  return { url, host, ip, port };
}
