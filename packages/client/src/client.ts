// The SDK: a client for one temp-inbox service and a handle per inbox. Uses the global
// fetch (Node 20+, browsers); no dependencies at all: the answers' types are in
// api-types.ts, generated from @temp-inbox/api's schemas.
import './dispose.js';
import { path, routes } from './api-routes.js';
import type { FullMail, MailListItem, MailMetadata, MailReport, MailsResponse, NewAddressResponse, ParsedMail, PowChallenge, SandboxTokenResponse, SettingsResponse } from './api-types.js';
import { TempInboxError, WaitTimeoutError } from './errors.js';
import { rankLinks, type LinkMatcher } from './links.js';
import { Message, type MessageSource } from './message.js';
import { solveChallenge } from './proof-of-work.js';
import { InboxWebhook } from './webhooks.js';
import { InboxSandbox, type OpenSandboxOptions } from './sandbox.js';

export interface ClientOptions {
  /** Where the service listens, e.g. http://localhost:8080. Default: $TEMP_INBOX_URL. */
  baseUrl?: string;
  /** How many times a request refused with 429 is retried after its Retry-After (default 5). Waits retry until their timeout. */
  maxRateLimitRetries?: number;
  /** Longest single long poll, in seconds (default and maximum 60, the service's limit); longer waits are chained. */
  longPollSeconds?: number;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface CreateInboxOptions {
  /** A name to ask for; without one the service picks a random name. */
  name?: string;
  /** One of the service's domains; its default domain without one. */
  domain?: string;
  /**
   * When the name is taken (409), refused (400) or custom names are off (403), take a
   * random name instead of failing. Default true; `inbox.address` tells which it got.
   */
  fallbackToRandom?: boolean;
  /** The bot challenge's token, when the service has the challenge on. */
  cfToken?: string;
}

export interface OpenInboxOptions {
  /**
   * Which mail the handle's waits consider: mail with an id greater than this. Default:
   * the newest id in the inbox when it is opened, so only mail that arrives afterwards
   * counts; 0 for every mail the inbox holds.
   */
  since?: number;
}

/** The server-side filters: case-insensitive substrings. */
export interface MailFilter {
  /** The From: name or address contains this. */
  from?: string;
  /** A To: recipient's name or address contains this (for a sandbox's mail: any envelope recipient's). */
  to?: string;
  /** The subject contains this. */
  subject?: string;
}

export interface WaitOptions extends MailFilter {
  /** Only mail this accepts counts (after the filters above). */
  match?: (message: Message) => boolean | Promise<boolean>;
  /** Milliseconds before the wait rejects with WaitTimeoutError (default 30000; Infinity waits for ever). */
  timeout?: number;
  /** Only mail with an id greater than this counts (default: see waitForMail and waitForNext). */
  since?: number;
  /** Aborts the wait; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface LinkWaitOptions extends WaitOptions {
  /** Only links containing this (a case-insensitive substring, or a RegExp) count; unsubscribe and other unwanted links included. */
  contains?: LinkMatcher;
}

/** A mail as listed (GET /api/mails), with its metadata parsed. */
export interface MailSummary extends Omit<MailListItem, 'metadata'> {
  metadata: MailMetadata;
}

/** The service's longest long poll, in seconds. */
const MAX_POLL_SECONDS = 60;
/** The service answers a wait with at most this many mails, the newest. */
const WAIT_WINDOW = 100;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Parsed mails a handle keeps, so that several waits on one mail fetch it once. */
const CACHED_MESSAGES = 100;

const now = () => performance.now();

function envUrl(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.['TEMP_INBOX_URL'] || undefined;
}

/** Resolves after ms, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Aborts when either aborts (AbortSignal.any, which Node 20.0–20.2 lack). */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const both = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) both.abort(s.reason);
    else s.addEventListener('abort', () => both.abort(s.reason), { once: true });
  }
  return both.signal;
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date; 1 s when missing or unreadable. */
export function retryAfterMs(value: string | null, at = Date.now()): number {
  if (value !== null && /^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = value === null ? NaN : Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - at) : 1000;
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function parseSummary(item: MailListItem): MailSummary {
  let metadata: MailMetadata;
  try {
    metadata = JSON.parse(item.metadata) as MailMetadata;
  } catch {
    metadata = { subject: '', from: { name: '', address: '' }, to: [], date: null, size: 0, preview: '', has_html: false, attachments: [], codes: [], links: [] };
  }
  return { ...item, metadata };
}

/** The same test the service applies to `from`, `to` and `subject` (for mail it did not filter). */
function passes(filter: MailFilter, m: MailMetadata, recipients: readonly string[] = []): boolean {
  const has = (value: string | undefined, needle: string) => (value ?? '').toLowerCase().includes(needle.toLowerCase());
  if (filter.subject && !has(m.subject, filter.subject)) return false;
  if (filter.from && !has(m.from?.name, filter.from) && !has(m.from?.address, filter.from)) return false;
  // A sandbox's mail is also found by any of its envelope's recipients (Bcc ones too).
  if (filter.to && !(m.to ?? []).some((r) => has(r.name, filter.to!) || has(r.address, filter.to!)) && !recipients.some((r) => has(r, filter.to!))) return false;
  return true;
}

function describeFilter(opts: WaitOptions & { contains?: LinkMatcher }, what: string): string {
  const parts: string[] = [];
  if (opts.from) parts.push(`from "${opts.from}"`);
  if (opts.to) parts.push(`to "${opts.to}"`);
  if (opts.subject) parts.push(`with a subject containing "${opts.subject}"`);
  if (opts.contains !== undefined) parts.push(`with a link containing ${typeof opts.contains === 'string' ? `"${opts.contains}"` : String(opts.contains)}`);
  if (opts.match) parts.push('accepted by match');
  return [what, ...parts].join(' ');
}

interface CallOptions {
  token?: string;
  body?: unknown;
  signal?: AbortSignal;
  /** Retries after a 429 (default: the client's maxRateLimitRetries). */
  rateRetries?: number;
  /** Called with the Retry-After of each 429 or 503 that is waited out. */
  onRateLimited?: () => void;
}

export class TempInboxClient {
  readonly baseUrl: string;
  readonly #retries: number;
  readonly #fetch: typeof fetch;
  readonly #pollSeconds: number;

  constructor(opts: ClientOptions = {}) {
    const baseUrl = opts.baseUrl ?? envUrl();
    if (!baseUrl) throw new TypeError('TempInboxClient needs a baseUrl: pass { baseUrl } or set TEMP_INBOX_URL.');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#retries = opts.maxRateLimitRetries ?? 5;
    this.#fetch = opts.fetch ?? ((input, init) => fetch(input, init));
    this.#pollSeconds = Math.max(1, Math.min(MAX_POLL_SECONDS, Math.floor(opts.longPollSeconds ?? MAX_POLL_SECONDS)));
  }

  /** @internal The longest single long poll, in seconds. */
  get longPollSeconds(): number {
    return this.#pollSeconds;
  }

  /**
   * One API call, read by `read`. A 429 (or a 503 with Retry-After) is retried after
   * its Retry-After; a GET whose connection drops is sent once more; any other
   * failure is a TempInboxError with the service's sentence.
   */
  async call<T>(method: string, path: string, opts: CallOptions, read: (res: Response) => Promise<T>): Promise<T> {
    const idempotent = method === 'GET' || method === 'HEAD';
    const maxRateRetries = opts.rateRetries ?? this.#retries;
    let rateRetries = 0;
    let dropped = 0;
    for (;;) {
      const headers: Record<string, string> = {};
      if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await this.#fetch(`${this.baseUrl}${path}`, {
          method,
          headers,
          body: opts.body === undefined ? null : JSON.stringify(opts.body),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (idempotent && dropped++ < 1) continue;
        throw new TempInboxError(0, `Could not reach the temp-inbox service at ${this.baseUrl} (${describe(err)}).`, { cause: err });
      }
      if ((res.status === 429 || (res.status === 503 && res.headers.has('retry-after'))) && rateRetries < maxRateRetries) {
        rateRetries++;
        opts.onRateLimited?.();
        await res.body?.cancel().catch(() => undefined);
        await sleep(retryAfterMs(res.headers.get('retry-after')), opts.signal);
        continue;
      }
      try {
        if (!res.ok) {
          const text = (await res.text()).trim();
          throw new TempInboxError(res.status, text || `The service answered ${method} ${path} with status ${res.status}.`);
        }
        return await read(res);
      } catch (err) {
        if (err instanceof TempInboxError) throw err;
        if (opts.signal?.aborted) throw opts.signal.reason;
        // The connection dropped while the body was read.
        if (idempotent && err instanceof TypeError && dropped++ < 1) continue;
        if (err instanceof SyntaxError) throw new TempInboxError(res.status, `The service's answer to ${method} ${path} was not valid JSON.`, { cause: err });
        throw new TempInboxError(0, `The connection to ${this.baseUrl} failed while reading the answer (${describe(err)}).`, { cause: err });
      }
    }
  }

  /** A call whose answer is JSON (undefined for 204). */
  json<T>(method: string, path: string, opts: CallOptions = {}): Promise<T | undefined> {
    return this.call(method, path, opts, async (res) => (res.status === 204 ? undefined : (JSON.parse(await res.text()) as T)));
  }

  /** Whether the service asks for a proof of work (learned from GET /api/challenge: 404 means no). */
  private proofOfWork: boolean | undefined;

  /** The `cf_token` of one POST /api/new_address: the caller's, a freshly solved proof of work, or none. */
  private async challengeToken(given: string | undefined): Promise<string | undefined> {
    if (given !== undefined || this.proofOfWork === false) return given;
    let challenge: PowChallenge | undefined;
    try {
      challenge = await this.json<PowChallenge>('GET', path(routes.challenge));
    } catch (err) {
      if (err instanceof TempInboxError && err.status === 404) {
        this.proofOfWork = false;
        return undefined;
      }
      throw err;
    }
    this.proofOfWork = true;
    const token = challenge && (await solveChallenge(challenge));
    if (!token) throw new TempInboxError(0, "No number solves the service's proof-of-work challenge; is the service's clock or configuration broken?");
    return token;
  }

  /**
   * A new inbox: its address and the token that reads it. Deleted by `inbox.delete()`
   * or `await using`. When the service asks for a proof of work (CHALLENGE=pow), each
   * attempt solves a fresh one first (proof-of-work.ts).
   */
  async createInbox(opts: CreateInboxOptions = {}): Promise<Inbox> {
    const post = async (withName: boolean) => {
      const token = await this.challengeToken(opts.cfToken);
      const body: Record<string, string> = {};
      if (opts.domain !== undefined) body['domain'] = opts.domain;
      if (token !== undefined) body['cf_token'] = token;
      if (withName && opts.name !== undefined) body['name'] = opts.name;
      return this.json<NewAddressResponse>('POST', path(routes.newAddress), { body });
    };
    let created: NewAddressResponse | undefined;
    try {
      created = await post(true);
    } catch (err) {
      const nameProblem = err instanceof TempInboxError && [400, 403, 409].includes(err.status) && opts.name !== undefined;
      // A 400 for another reason (the domain, the challenge) fails again, with its own sentence.
      if (!nameProblem || opts.fallbackToRandom === false) throw err;
      created = await post(false);
    }
    return new Inbox(this, created!.address, created!.jwt, 0);
  }

  /**
   * An inbox created earlier, from its token. Its waits consider the mail that arrives
   * after this call, unless `since` says otherwise. Rejects with TempInboxError 401
   * when the token is invalid, expired or its address was deleted.
   */
  async openInbox(token: string, opts: OpenInboxOptions = {}): Promise<Inbox> {
    const [settings, newest] = await Promise.all([
      this.json<SettingsResponse>('GET', path(routes.settings), { token }),
      opts.since !== undefined ? Promise.resolve(opts.since) : this.json<MailsResponse>('GET', `${path(routes.mails)}?limit=1&offset=0`, { token }).then((r) => r?.results[0]?.id ?? 0),
    ]);
    return new Inbox(this, settings!.address, token, newest);
  }

  /**
   * A sandbox's inbox (the mail its SMTP login sent, to whatever recipients), from its name
   * and password: the same Inbox an address gives, with `inbox.sandbox` for its chaos
   * settings. `await using` leaves it in place (only the operators delete a sandbox).
   * Rejects with TempInboxError 401 for a wrong name or password.
   */
  async openSandbox(opts: OpenSandboxOptions): Promise<Inbox> {
    const login = await this.json<SandboxTokenResponse>('POST', path(routes.sandboxToken), { body: { name: opts.name, password: opts.password } });
    const inbox = await this.openInbox(login!.jwt, opts.since === undefined ? {} : { since: opts.since });
    inbox.sandbox = new InboxSandbox(this, login!.name, login!.jwt);
    return inbox;
  }
}

/**
 * One inbox: its address, its token, its mail, and waits for mail. `await using inbox
 * = await client.createInbox()` deletes it when the scope ends.
 */
export class Inbox implements MessageSource {
  readonly address: string;
  /** The bearer token (JWT) that reads this inbox. */
  readonly token: string;
  readonly #client: TempInboxClient;
  /** Waits consider mail with an id above this (0 for a new inbox). */
  readonly #baseline: number;
  /** The largest id a wait of this handle has returned. */
  #returned = 0;
  #deleted = false;
  readonly #cache = new Map<string, Message>();
  /** Set when the inbox is a sandbox's (client.openSandbox): its name and chaos settings. */
  sandbox: InboxSandbox | undefined;

  constructor(client: TempInboxClient, address: string, token: string, baseline = 0) {
    this.#client = client;
    this.address = address;
    this.token = token;
    this.#baseline = baseline;
  }

  /** The inbox's webhook: `set(url)`, `get()`, `remove()`, `deliveries()` (webhooks.ts). */
  get webhook(): InboxWebhook {
    return new InboxWebhook(this.#client, this.token);
  }

  /** The id above which waitForMail looks (mail with a greater id counts). */
  get since(): number {
    return this.#baseline;
  }

  /** The largest mail id a wait of this handle has returned (0 before any). */
  get lastReturnedId(): number {
    return this.#returned;
  }

  /** Mail, newest first (GET /api/mails), with its metadata parsed; `count` is the total. */
  async list(opts: { limit?: number; offset?: number } = {}): Promise<{ mails: MailSummary[]; count: number }> {
    const body = await this.#client.json<MailsResponse>('GET', `${path(routes.mails)}?limit=${opts.limit ?? 100}&offset=${opts.offset ?? 0}`, { token: this.token });
    return { mails: body!.results.map(parseSummary), count: body!.count };
  }

  /** One mail, parsed (GET /api/mail/{uuid}/parsed). */
  async read(uuid: string, opts: { signal?: AbortSignal } = {}): Promise<Message> {
    const cached = this.#cache.get(uuid);
    if (cached) return cached;
    const body = await this.#client.json<ParsedMail>('GET', path(routes.parsedMail, { uuid }), { token: this.token, ...(opts.signal ? { signal: opts.signal } : {}) });
    const message = new Message(this, body!);
    if (this.#cache.size >= CACHED_MESSAGES) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(uuid, message);
    return message;
  }

  /** The message source as received, with the service's Received: line first. */
  async raw(uuid: string): Promise<string> {
    const body = await this.#client.json<FullMail>('GET', path(routes.mail, { uuid }), { token: this.token });
    return body!.raw;
  }

  /**
   * The deliverability report of one mail (GET /api/mail/{uuid}/report): spam score, HTML
   * support, links, content and the Gmail/Yahoo sender rules, each with a verdict.
   * `checkLinks` also fetches each link through the service (never those that act when opened).
   */
  async report(uuid: string, opts: { checkLinks?: boolean } = {}): Promise<MailReport> {
    const query = opts.checkLinks ? '?links=check' : '';
    return (await this.#client.json<MailReport>('GET', `${path(routes.mailReport, { uuid })}${query}`, { token: this.token }))!;
  }

  /** The decoded bytes of one attachment. */
  attachmentContent(uuid: string, attachmentId: string): Promise<Uint8Array> {
    return this.#client.call('GET', path(routes.attachment, { uuid, attachmentId }), { token: this.token }, async (res) => new Uint8Array(await res.arrayBuffer()));
  }

  /**
   * Marks one mail read, or unread with `seen` false (PATCH /api/mail/{uuid}); resolves with
   * the mail as listed. Reading a mail never marks it: this is the only way.
   */
  async markSeen(uuid: string, seen = true): Promise<MailSummary> {
    const item = await this.#client.json<MailListItem>('PATCH', path(routes.mail, { uuid }), { token: this.token, body: { seen } });
    // A Message read before holds the old value.
    this.#cache.delete(uuid);
    return parseSummary(item!);
  }

  /** Deletes one mail. */
  async deleteMail(uuid: string): Promise<void> {
    await this.#client.json('DELETE', path(routes.deleteMail, { uuid }), { token: this.token });
    this.#cache.delete(uuid);
  }

  /** Deletes every mail of the inbox. */
  async clear(): Promise<void> {
    await this.#client.json('DELETE', path(routes.clearInbox), { token: this.token });
    this.#cache.clear();
  }

  /** Deletes the inbox and all its mail; the token stops working. A second call does nothing. */
  async delete(): Promise<void> {
    if (this.#deleted) return;
    await this.#client.json('DELETE', path(routes.deleteAddress), { token: this.token });
    this.#deleted = true;
    this.#cache.clear();
  }

  /** `await using`: deletes the inbox (a sandbox's is left in place); an inbox already gone (401) is not an error. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.sandbox) return;
    try {
      await this.delete();
    } catch (err) {
      if (!(err instanceof TempInboxError && err.status === 401)) throw err;
      this.#deleted = true;
    }
  }

  /**
   * The oldest mail that matches, among all the mail this inbox received since the
   * handle was made (for createInbox: all of its mail) — so waiting twice gives the
   * same mail, and waitForCode then waitForLink can read one mail. Waits (long
   * polls, chained past the service's 60 s) until such mail arrives; rejects with
   * WaitTimeoutError once `timeout` ms have passed.
   */
  async waitForMail(opts: WaitOptions = {}): Promise<Message> {
    return (await this.#wait(opts, opts.since ?? this.#baseline, 'mail', undefined, () => true)).message;
  }

  /** Like waitForMail, but only mail newer than any mail a wait of this handle has returned. */
  async waitForNext(opts: WaitOptions = {}): Promise<Message> {
    const since = opts.since ?? Math.max(this.#baseline, this.#returned);
    return (await this.#wait(opts, since, 'new mail', undefined, () => true)).message;
  }

  /** The most likely verification code of the oldest matching mail that has one. */
  async waitForCode(opts: WaitOptions = {}): Promise<string> {
    const found = await this.#wait(opts, opts.since ?? this.#baseline, 'mail with a code', (m) => m.metadata.codes.length > 0, (msg) => msg.codes[0]);
    return found.value;
  }

  /**
   * The best link of the oldest matching mail that has one: verification, sign-in and
   * reset links first; unsubscribe, privacy, social and tracking links never, unless
   * `contains` names them.
   */
  async waitForLink(opts: LinkWaitOptions = {}): Promise<string> {
    const { contains } = opts;
    const found = await this.#wait(opts, opts.since ?? this.#baseline, 'mail with a link', (m) => m.metadata.links.length > 0, (msg) => rankLinks(msg.links, msg.html, contains)[0]);
    return found.value;
  }

  /**
   * The wait behind every waitFor*: long polls GET /api/mails/wait with the filters,
   * takes the answer's mails oldest first, and returns the first that `cheap` (on the
   * listed metadata), `opts.match` and `pick` (on the parsed mail) all accept.
   */
  async #wait<T>(
    opts: WaitOptions & { contains?: LinkMatcher },
    since: number,
    what: string,
    cheap: ((m: MailSummary) => boolean) | undefined,
    pick: (message: Message) => T | undefined,
  ): Promise<{ message: Message; value: T }> {
    const timeout = opts.timeout ?? DEFAULT_TIMEOUT_MS;
    if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) throw new RangeError('timeout must be a number of milliseconds, 0 or more.');
    const started = now();
    const deadline = started + timeout;
    const expiry = new AbortController();
    const timer = Number.isFinite(timeout) ? setTimeout(() => expiry.abort(new WaitTimeoutError('', timeout)), timeout) : undefined;
    const signal = opts.signal ? anySignal(expiry.signal, opts.signal) : expiry.signal;
    const filter: MailFilter = { ...(opts.from ? { from: opts.from } : {}), ...(opts.to ? { to: opts.to } : {}), ...(opts.subject ? { subject: opts.subject } : {}) };
    let rateLimited = false;
    let cursor = since;
    try {
      for (;;) {
        const left = Number.isFinite(deadline) ? deadline - now() : Infinity;
        const seconds = Math.max(1, Math.min(this.#client.longPollSeconds, Math.ceil(left / 1000)));
        const query = new URLSearchParams({ since: String(cursor), timeout: String(seconds), ...filter });
        const answer = await this.#client.json<MailsResponse>('GET', `${path(routes.waitMails)}?${query}`, {
          token: this.token,
          signal,
          rateRetries: Infinity,
          onRateLimited: () => (rateLimited = true),
        });
        if (!answer) continue; // 204: nothing yet; the next poll (or the deadline) follows
        let batch = answer.results.map(parseSummary);
        // The service looks at the inbox's newest 100 mails; with more, older matches may lie beyond them.
        if (answer.count > WAIT_WINDOW) batch = await this.#scan(cursor, signal);
        batch.sort((a, b) => a.id - b.id);
        for (const summary of batch) {
          if (summary.id <= cursor) continue;
          cursor = summary.id;
          if (!passes(filter, summary.metadata, summary.recipients) || (cheap && !cheap(summary))) continue;
          let message: Message;
          try {
            message = await this.read(summary.uuid, { signal });
          } catch (err) {
            if (err instanceof TempInboxError && err.status === 404) continue; // deleted meanwhile
            throw err;
          }
          if (opts.match && !(await opts.match(message))) continue;
          const value = pick(message);
          if (value === undefined) continue;
          this.#returned = Math.max(this.#returned, message.id);
          return { message, value };
        }
      }
    } catch (err) {
      if (!expiry.signal.aborted || opts.signal?.aborted) throw err;
      // Never early: a timer may fire a fraction of a millisecond before its time.
      const early = deadline - now();
      if (early > 0) await sleep(Math.ceil(early));
      const seconds = timeout >= 1000 && timeout % 1000 === 0 ? `${timeout / 1000} s` : `${timeout} ms`;
      throw new WaitTimeoutError(
        `No ${describeFilter(opts, what)} reached ${this.address} within ${seconds}${rateLimited ? ' (the service was rate-limiting these requests)' : ''}.`,
        timeout,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every listed mail with an id above `since` (paging GET /api/mails, newest first). */
  async #scan(since: number, signal: AbortSignal): Promise<MailSummary[]> {
    const found: MailSummary[] = [];
    for (let offset = 0; ; offset += WAIT_WINDOW) {
      const page = await this.#client.json<MailsResponse>('GET', `${path(routes.mails)}?limit=${WAIT_WINDOW}&offset=${offset}`, { token: this.token, signal, rateRetries: Infinity });
      const results = page!.results.map(parseSummary);
      found.push(...results.filter((m) => m.id > since));
      if (results.length < WAIT_WINDOW || results.some((m) => m.id <= since)) return found;
    }
  }
}
