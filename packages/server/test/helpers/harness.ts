// Test harness: the whole service on port 0 with a fresh data directory, a
// tiny HTTP client with a cookie jar, and an SMTP client that runs scripts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { after } from 'node:test';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig, RATE_LIMIT_ROUTES } from '../../src/config/index.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';

export const DOMAIN = 'temp-inbox.localhost';

export interface TestServer extends RunningServer {
  dataDir: string;
  /** Stops the server; removes the data directory unless keepData. */
  close(opts?: { keepData?: boolean }): Promise<void>;
}

/** A clock a test moves by hand, for startTestServer's `now`: the service's idea of the time (ages and expiries, not its timers). */
export interface TestClock {
  now: () => number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function testClock(start = Date.now()): TestClock {
  let t = start;
  return {
    now: () => t,
    set(ms) {
      t = ms;
    },
    advance(ms) {
      t += ms;
    },
  };
}

/**
 * Rate limits (HTTP routes and SMTP per window) are off unless the test's env sets them.
 * `start.now` gives the server a clock of the test's (for expiries).
 */
export async function startTestServer(env: Record<string, string> = {}, dataDir?: string, logger?: Logger, start: Omit<StartOptions, 'logger'> = {}): Promise<TestServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'temp-inbox-test-'));
  const noLimits = {
    ...Object.fromEntries(Object.keys(RATE_LIMIT_ROUTES).map((r) => [`RATE_LIMIT_${r}`, '0'])),
    SMTP_RATE_MESSAGES: '0',
    SMTP_RATE_RECIPIENTS: '0',
    SMTP_RATE_BYTES: '0',
    SMTP_RATE_NEW_ADDRESSES: '0',
    SMTP_DAILY_BYTES: '0',
  };
  const config = loadConfig({
    ...noLimits,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: '0',
    SMTP_HOSTNAME: 'mx.test',
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    // The authentication checks ask a port where nothing listens (refused at once: each
    // verdict temperror), never the machine's resolvers: no test depends on outside DNS.
    // mail-auth.test.ts points DNS_SERVERS at a DNS server of its own.
    DNS_SERVERS: '127.0.0.1:1',
    ...env,
  });
  const server = await startServer(config, { ...start, logger: logger ?? pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }) });
  return {
    ...server,
    dataDir: dir,
    async close(opts = {}) {
      await server.stop();
      if (!opts.keepData && !dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: any;
  setCookies: string[];
}

export interface RequestOptions {
  method?: string;
  jwt?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  jar?: CookieJar;
  localAddress?: string;
}

/** A minimal cookie jar: name -> value, honouring Max-Age=0 deletions. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  header(): string | undefined {
    return this.cookies.size ? [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }
  store(setCookies: string[]): void {
    for (const sc of setCookies) {
      const [pair, ...attrs] = sc.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** Plain HTTP over node:http so a test can pick the source address (127.0.0.2). */
export async function request(base: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const { request: httpRequest } = await import('node:http');
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  if (opts.jwt !== undefined) headers['authorization'] = `Bearer ${opts.jwt}`;
  const cookie = opts.jar?.header();
  if (cookie && !headers['cookie']) headers['cookie'] = cookie;
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? (body === undefined ? 'GET' : 'POST'), headers, localAddress: opts.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) v.forEach((x) => h.append(k, x));
            else if (v !== undefined) h.set(k, v);
          }
          const setCookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
          opts.jar?.store(setCookies);
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: h, text, json, setCookies });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A client bound to one server. */
/** How many live mails the inbox of `jwt` holds (GET /api/mails's count). */
export async function mailCount(server: { httpUrl: string }, jwt: string): Promise<number> {
  return (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.count as number;
}

export function client(server: { httpUrl: string }) {
  return (path: string, opts?: RequestOptions) => request(server.httpUrl, path, opts);
}

export async function createAddress(server: { httpUrl: string }, body: Record<string, unknown> = {}, jar?: CookieJar) {
  const res = await request(server.httpUrl, '/api/new_address', { method: 'POST', body, jar });
  if (res.status !== 200) throw new Error(`new_address failed: ${res.status} ${res.text}`);
  return res.json as { address: string; jwt: string };
}

/** One SMTP conversation. Lines are sent with CRLF; replies are read whole (multi-line aware). */
export class SmtpClient {
  private buffer = '';
  private waiters: (() => void)[] = [];
  private closed = false;
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buffer += d;
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('error', () => undefined);
  }

  /** `localAddress` picks the client's address (127.0.0.2, …) for the per-client limits. */
  static async connect(port: number, host = '127.0.0.1', localAddress?: string): Promise<SmtpClient> {
    const socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new SmtpClient(socket);
    await client.reply(); // greeting
    return client;
  }

  /** Reads one complete reply: { code, text } where text holds every line. */
  async reply(timeoutMs = 10_000): Promise<{ code: number; text: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3})(?: [^\r\n]*)?\r\n/.exec(this.buffer);
      if (m) {
        this.buffer = this.buffer.slice(m[0].length);
        return { code: Number(m[1]), text: m[0] };
      }
      if (this.closed) throw new Error(`SMTP connection closed; unread: ${JSON.stringify(this.buffer)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SMTP reply timed out; unread: ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async command(line: string): Promise<{ code: number; text: string }> {
    this.socket.write(line + '\r\n', 'latin1');
    return this.reply();
  }

  /** Sends message bytes with dot-stuffing and the terminating <CRLF>.<CRLF>. */
  async data(message: Buffer | string): Promise<{ code: number; text: string }> {
    const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
    const stuffed = Buffer.from(bytes.toString('latin1').replace(/(^|\r\n)\./g, '$1..'), 'latin1');
    const ending = stuffed.subarray(-2).toString('latin1') === '\r\n' ? '.\r\n' : '\r\n.\r\n';
    this.socket.write(Buffer.concat([stuffed, Buffer.from(ending, 'latin1')]));
    return this.reply();
  }

  /** Runs `[command, expectedCode]` steps (the Inbucket handler_test style); throws on the first unexpected reply. */
  async script(steps: [command: string, expectedCode: number][]): Promise<{ code: number; text: string }[]> {
    const replies = [];
    for (const [command, expected] of steps) {
      const r = await this.command(command);
      if (r.code !== expected) throw new Error(`${command} -> ${r.text.trim()} (expected ${expected})`);
      replies.push(r);
    }
    return replies;
  }

  write(raw: Buffer | string): void {
    this.socket.write(raw);
  }

  async quit(): Promise<void> {
    if (!this.closed) {
      await this.command('QUIT').catch(() => undefined);
      this.socket.destroy();
    }
  }
}

/** A session (from `localAddress`, a loopback address, when given) that has said EHLO, MAIL FROM `from` ('' for the null sender), RCPT TO `to` and DATA (354): the message comes next. */
export async function openData(port: number, to: string, from = 's@example.org', localAddress?: string): Promise<SmtpClient> {
  const smtp = await SmtpClient.connect(port, '127.0.0.1', localAddress);
  await smtp.script([
    ['EHLO client.test', 250],
    [`MAIL FROM:<${from}>`, 250],
    [`RCPT TO:<${to}>`, 250],
    ['DATA', 354],
  ]);
  return smtp;
}

/** start(env) starts a test server that is stopped when the file's tests are done. */
export function serversStoppedAfter(): (env?: Record<string, string>) => Promise<TestServer> {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  return async (env = {}) => {
    const s = await startTestServer(env);
    servers.push(s);
    return s;
  };
}

/**
 * Delivers one message over a real SMTP session and asserts the 250 after DATA.
 * Returns the final reply.
 */
export async function sendMail(port: number, opts: { from?: string; to: string[]; message: Buffer | string }): Promise<{ code: number; text: string }> {
  const smtp = await SmtpClient.connect(port);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      [`MAIL FROM:<${opts.from ?? 'sender@example.com'}>`, 250],
      ...opts.to.map((t): [string, number] => [`RCPT TO:<${t}>`, 250]),
      ['DATA', 354],
    ]);
    const final = await smtp.data(opts.message);
    if (final.code !== 250) throw new Error(`DATA -> ${final.text.trim()}`);
    return final;
  } finally {
    await smtp.quit();
  }
}

/**
 * The Received: trace header the server puts in front of each stored copy (RFC 5321 §4.4),
 * read from the start of the raw mail as the API returns it; ASCII, so its length is its bytes.
 */
export function receivedBlock(raw: string): string {
  const m = /^Received: from [^\r\n]*\r\n\tby [^\r\n]*\r\n\tfor <[^\r\n]*>; [^\r\n]*\r\n/.exec(raw);
  if (!m) throw new Error(`no Received: block at the start of ${JSON.stringify(raw.slice(0, 200))}`);
  return m[0];
}

/**
 * What the server stores for message bytes sent with SmtpClient.data (no line starting
 * with a dot): the bytes, and the CRLF that ends the last line when they lack one (the
 * CRLF before the terminating dot belongs to the message).
 */
export function storedBytes(sent: Buffer | string): Buffer {
  const bytes = typeof sent === 'string' ? Buffer.from(sent, 'utf8') : sent;
  return bytes.subarray(-2).toString('latin1') === '\r\n' ? bytes : Buffer.concat([bytes, Buffer.from('\r\n')]);
}

/** Stored bytes as the API's `raw` carries them: UTF-8 text when they are valid UTF-8, else one character per byte. */
export function apiText(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** The token startTestServer's callers pass as METRICS_TOKEN when a test reads /metrics (pushOpen, untilPushOpen). */
export const METRICS_TOKEN = 'test-metrics-token';

/** The event streams and long-poll waits the server holds open (temp_inbox_push_open; it runs with METRICS_TOKEN). */
export async function pushOpen(server: { httpUrl: string }, token = METRICS_TOKEN): Promise<{ events: number; wait: number }> {
  const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} (start the server with METRICS_TOKEN)`);
  const open = (kind: string) => Number(new RegExp(`^temp_inbox_push_open\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(res.text)?.[1]);
  return { events: open('events'), wait: open('wait') };
}

/**
 * Until the server holds exactly this many streams and/or waits open (at most 10 s): how a
 * test knows a wait or stream was admitted, or released, instead of sleeping and hoping.
 */
export async function untilPushOpen(server: { httpUrl: string }, want: { events?: number; wait?: number }, token = METRICS_TOKEN): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = await pushOpen(server, token);
    if ((want.events === undefined || now.events === want.events) && (want.wait === undefined || now.wait === want.wait)) return;
    if (Date.now() > deadline) throw new Error(`open streams and waits: ${JSON.stringify(now)}, not ${JSON.stringify(want)}, after 10 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Builds a simple CRLF message. */
export function message(headers: Record<string, string>, body: string): string {
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  return `${head}\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}${body.endsWith('\n') ? '' : '\r\n'}`;
}

export const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/** Waits until `ok()` holds, looking every 20 ms; fails the test, saying `what`, after `ms`. */
export async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
