// temp-inbox client: create a disposable inbox, wait for its mail, take the code.
// Uses the global fetch (Node 20+, browsers); no dependencies.
//
//   const client = new TempInboxClient({ baseUrl: 'http://localhost:8080' });
//   const inbox = await client.createInbox();
//   await signUp(inbox.address);
//   const code = await inbox.waitForCode({ timeoutMs: 30_000 });

export interface Mailbox {
  name: string;
  address: string;
}

export interface AttachmentInfo {
  id: string;
  filename: string;
  content_type: string;
  size: number;
}

/** The decoded metadata of a mail (the API's `metadata` JSON string, parsed). */
export interface MailMetadata {
  subject: string;
  from: Mailbox;
  to: Mailbox[];
  date: string | null;
  size: number;
  preview: string;
  has_html: boolean;
  attachments: AttachmentInfo[];
  /** Likely verification codes, most likely first. */
  codes: string[];
  links: string[];
}

/** A mail as listed, with its metadata already parsed. */
export interface Mail {
  id: number;
  uuid: string;
  /** Envelope sender (MAIL FROM), or the From: address for a null sender. */
  source: string;
  address: string;
  created_at: string;
  message_id: string;
  metadata: MailMetadata;
}

export interface FullMail extends Mail {
  /** The message as received, with a Received: line prepended. */
  raw: string;
}

/** An answer of the API other than success: its status and plain-text sentence. */
export class TempInboxError extends Error {
  override name = 'TempInboxError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No matching mail arrived in time. */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
}

export interface ClientOptions {
  /** Where the service listens, e.g. http://localhost:8080. */
  baseUrl: string;
  /** How often a request refused with 429 is retried after its Retry-After (default 5). */
  maxRateLimitRetries?: number;
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
   * random name instead of failing. Default true.
   */
  fallbackToRandom?: boolean;
  /** The bot challenge's token, when the service has the challenge on. */
  cfToken?: string;
}

export interface WaitOptions {
  /** Give up after this long (default 30 s): WaitTimeoutError. */
  timeoutMs?: number;
  /** Only mail with a greater id counts (default: any mail of the inbox, or the last one waited for). */
  since?: number;
  /** Only mail this accepts counts, e.g. (m) => m.metadata.subject.includes('Confirm'). */
  match?: (mail: Mail) => boolean;
}

interface RawMail extends Omit<Mail, 'metadata'> {
  metadata: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function parseMail<T extends RawMail>(m: T): Omit<T, 'metadata'> & { metadata: MailMetadata } {
  return { ...m, metadata: JSON.parse(m.metadata) as MailMetadata };
}

export class TempInboxClient {
  readonly baseUrl: string;
  private readonly retries: number;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.retries = opts.maxRateLimitRetries ?? 5;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  /**
   * One API call. A 429 is retried after its Retry-After (the wait ends early when
   * the deadline would pass); every other failure is a TempInboxError.
   */
  async request<T>(method: string, path: string, opts: { jwt?: string; body?: unknown; deadline?: number } = {}): Promise<{ status: number; body: T | undefined }> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {};
      if (opts.jwt) headers['authorization'] = `Bearer ${opts.jwt}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await this.fetchImpl(`${this.baseUrl}${path}`, { method, headers, body: opts.body === undefined ? null : JSON.stringify(opts.body) });
      if (res.status === 429 && attempt < this.retries) {
        const wait = Math.max(1, Number(res.headers.get('retry-after')) || 1) * 1000;
        await res.body?.cancel();
        if (opts.deadline !== undefined && Date.now() + wait > opts.deadline) throw new TempInboxError(429, 'Rate limited, and the wait would pass the deadline.');
        await sleep(wait);
        continue;
      }
      if (res.status === 204) return { status: 204, body: undefined };
      const text = await res.text();
      if (!res.ok) throw new TempInboxError(res.status, text.trim() || `HTTP ${res.status}`);
      return { status: res.status, body: JSON.parse(text) as T };
    }
  }

  /** A new inbox: its address and the token that reads it. */
  async createInbox(opts: CreateInboxOptions = {}): Promise<Inbox> {
    const body: Record<string, string> = {};
    if (opts.domain !== undefined) body['domain'] = opts.domain;
    if (opts.cfToken !== undefined) body['cf_token'] = opts.cfToken;
    try {
      const { body: created } = await this.request<{ address: string; jwt: string }>('POST', '/api/new_address', { body: opts.name === undefined ? body : { ...body, name: opts.name } });
      return new Inbox(this, created!.address, created!.jwt);
    } catch (err) {
      const nameProblem = err instanceof TempInboxError && [400, 403, 409].includes(err.status) && opts.name !== undefined;
      // A 400 for another reason (the domain, the challenge) fails again, with its own sentence.
      if (!nameProblem || opts.fallbackToRandom === false) throw err;
      const { body: created } = await this.request<{ address: string; jwt: string }>('POST', '/api/new_address', { body });
      return new Inbox(this, created!.address, created!.jwt);
    }
  }

  /** An inbox created earlier, from its address and token. */
  inbox(address: string, jwt: string): Inbox {
    return new Inbox(this, address, jwt);
  }
}

export class Inbox {
  /** The largest mail id this object has returned from a wait. */
  private seen = 0;

  constructor(
    private readonly client: TempInboxClient,
    readonly address: string,
    readonly jwt: string,
  ) {}

  /** Mail, newest first. */
  async list(limit = 100, offset = 0): Promise<{ mails: Mail[]; count: number }> {
    const { body } = await this.client.request<{ results: RawMail[]; count: number }>('GET', `/api/mails?limit=${limit}&offset=${offset}`, { jwt: this.jwt });
    return { mails: body!.results.map(parseMail), count: body!.count };
  }

  /** One mail with its raw message. */
  async read(uuid: string): Promise<FullMail> {
    const { body } = await this.client.request<RawMail & { raw: string }>('GET', `/api/mail/${encodeURIComponent(uuid)}`, { jwt: this.jwt });
    return parseMail(body!);
  }

  /**
   * The next mail: the oldest one newer than `since` (by default, newer than the last
   * mail a wait of this object returned) that `match` accepts. Long-polls the
   * service (GET /api/mails/wait), so it returns the moment the mail is stored.
   */
  async waitForMail(opts: WaitOptions = {}): Promise<Mail> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    let since = opts.since ?? this.seen;
    for (;;) {
      const left = Math.floor((deadline - Date.now()) / 1000);
      if (left < 0) break;
      const { status, body } = await this.client.request<{ results: RawMail[] }>('GET', `/api/mails/wait?since=${since}&timeout=${Math.min(60, left)}`, {
        jwt: this.jwt,
        deadline,
      });
      if (status === 204 || !body) {
        if (left === 0) break;
        continue;
      }
      // Oldest first, so that a burst is taken in the order it arrived.
      const mails = body.results.map(parseMail).sort((a, b) => a.id - b.id);
      for (const mail of mails) {
        since = Math.max(since, mail.id);
        if (!opts.match || opts.match(mail)) {
          this.seen = Math.max(this.seen, mail.id);
          return mail;
        }
      }
    }
    throw new WaitTimeoutError(`No matching mail reached ${this.address} within ${opts.timeoutMs ?? 30_000} ms.`);
  }

  /** The most likely verification code of the next mail that has one. */
  async waitForCode(opts: WaitOptions = {}): Promise<string> {
    const mail = await this.waitForMail({ ...opts, match: (m) => m.metadata.codes.length > 0 && (!opts.match || opts.match(m)) });
    return mail.metadata.codes[0]!;
  }

  /** The first link of the next mail whose links `pattern` matches (any link without one). */
  async waitForLink(opts: WaitOptions & { pattern?: RegExp } = {}): Promise<string> {
    const pick = (m: Mail) => m.metadata.links.find((l) => !opts.pattern || opts.pattern.test(l));
    const mail = await this.waitForMail({ ...opts, match: (m) => pick(m) !== undefined && (!opts.match || opts.match(m)) });
    return pick(mail)!;
  }

  async delete(uuid: string): Promise<void> {
    await this.client.request('DELETE', `/api/mails/${encodeURIComponent(uuid)}`, { jwt: this.jwt });
  }

  async clear(): Promise<void> {
    await this.client.request('DELETE', '/api/clear_inbox', { jwt: this.jwt });
  }

  /** Deletes the address and all its mail; the token stops working. */
  async destroy(): Promise<void> {
    await this.client.request('DELETE', '/api/delete_address', { jwt: this.jwt });
  }
}
