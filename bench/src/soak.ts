// Soak (issue "Reliability — Soak"): the built service as a child process under
// ten minutes of mixed load from this process — SMTP in over two connections,
// polling of several inboxes every 500 ms, browser-session create/switch cycles
// with a cookie jar, mail reads, per-mail deletes and clear_inbox, event streams
// held and reconnected, and long-poll waits. It counts every response by status,
// samples the child's RSS every 5 s from /proc/<pid>/status and its V8 heap from its
// own GET /metrics (METRICS_TOKEN is set for this), and prints the totals and the
// median memory of the first minute, of the minute after the warm-up (minutes 2-3)
// and of the last minute.
//
//   node --import tsx bench/src/soak.ts [--minutes=10] [--quick]
//
// The service runs as `npm start` runs it (the node flags of package.json's "start");
// SOAK_NODE_FLAGS adds flags for a diagnosis, e.g. --heapsnapshot-signal=SIGUSR2.
//
// --quick runs 30 s, with 10 s windows (the warm-up is the first one). Exit code 1
// when any response other than 429 is an error (>= 400 or a network error), when an
// SMTP delivery is not answered 250, when the service crashes, or when memory grew
// past its bound from the window after the warm-up to the last one: RSS by more than
// MAX_RSS_GROWTH_MB, or V8's old generation in use by more than MAX_HEAP_GROWTH_MB
// (window medians: the heap's use saws up and down between collections); else 0. The
// result is written to bench/results/soak-<timestamp>[-quick].json.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';

import { RESULTS_DIR, SERVER_MAIN, SERVER_NODE_FLAGS } from './lib/paths.js';
import { BENCH_UNLIMITED } from './lib/temp-inbox.js';

/** The routes the soak's clients use, each limited far above their rate (the windows are kept and their memory counted); BENCH_UNLIMITED turns every other off. */
const RATE_LIMITED_ROUTES = ['NEW_ADDRESS', 'MAILS', 'MAIL', 'SETTINGS', 'SWITCH_ADDRESS', 'DELETE_ADDRESS', 'CLEAR_INBOX', 'ATTACHMENT'];

// ---------------------------------------------------------------------------
// Settings

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const minutesArg = argv.find((a) => a.startsWith('--minutes='));
const minutes = minutesArg ? Number(minutesArg.slice('--minutes='.length)) : 10;
if (!quick && !(minutes > 0)) {
  process.stderr.write(`soak: --minutes must be a positive number, got ${minutesArg}\n`);
  process.exit(2);
}
const DURATION_MS = quick ? 30_000 : Math.round(minutes * 60_000);
/** Memory is compared between windows of this length (medians of the samples in each). */
const WINDOW_MS = quick ? 10_000 : 60_000;
/**
 * Memory rises while V8 and the caches size themselves for the load (docs/benchmarks.md
 * "Soak results": about 10 MB in the first minutes); growth is judged from the window
 * that starts here.
 */
const WARMUP_MS = quick ? WINDOW_MS : Math.min(120_000, Math.max(0, DURATION_MS - 2 * WINDOW_MS));
/**
 * The bounds on growth from the window after the warm-up to the last window. Ten-minute
 * runs have grown 6-9 MB of RSS after minute 2 (a slow rise that slows; the live heap
 * stays flat): a leak of a kilobyte per request (~35 requests a second) would add 2 MB a
 * minute, past 16 MB within ten minutes.
 */
const MAX_RSS_GROWTH_MB = 16;
const MAX_HEAP_GROWTH_MB = 8;
const RSS_EVERY_MS = 5_000;
/** Lets the soak read the service's heap from its own /metrics. */
const METRICS_TOKEN = `soak-${process.pid}-${Date.now()}`;
const INBOXES = 6;
const POLL_EVERY_MS = 500;
const SMTP_CONNECTIONS = 2;
/** Per connection: ~2 messages a second, ~4 in all. */
const SMTP_EVERY_MS = 500;
const SESSION_ACTORS = 2;

// ---------------------------------------------------------------------------
// Bookkeeping

interface ErrorSample {
  atMs: number;
  what: string;
  status: number | string;
  body: string;
}

const byStatus = new Map<string, number>();
const byEndpoint = new Map<string, { statuses: Map<string, number>; latencies: number[] }>();
const errors: ErrorSample[] = [];
let errorCount = 0;
let rateLimited = 0;
const smtp = { sent: 0, accepted: 0, failed: 0 };
let checkFailures = 0;
const t0 = performance.now();
const elapsed = () => Math.round(performance.now() - t0);

function record(endpoint: string, status: number | string, ms: number, body: string): void {
  const key = String(status);
  byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  let e = byEndpoint.get(endpoint);
  if (!e) byEndpoint.set(endpoint, (e = { statuses: new Map(), latencies: [] }));
  e.statuses.set(key, (e.statuses.get(key) ?? 0) + 1);
  e.latencies.push(ms);
  if (status === 429) rateLimited++;
  else if (typeof status !== 'number' || status >= 400) noteError(endpoint, status, body);
}

function noteError(what: string, status: number | string, body: string): void {
  errorCount++;
  if (errors.length < 50) errors.push({ atMs: elapsed(), what, status, body: body.slice(0, 300) });
}

// ---------------------------------------------------------------------------
// HTTP with keep-alive and a minimal cookie jar

// Idle sockets are dropped after 30 s, well before the server's keep-alive
// timeout (Fastify: 72 s). Otherwise a request can be written to a socket at the
// moment the server closes it for idleness, an ECONNRESET that says nothing about
// the service (Node's Agent ignores the server's Keep-Alive hint without a timeout).
const agent = new Agent({ keepAlive: true, maxSockets: 32, timeout: 30_000 });
let base = '';

class Jar {
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
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

interface Res {
  status: number;
  json: any;
  text: string;
}

/** One request; `endpoint` is the label it is counted under (a route, not a URL). */
function call(endpoint: string, method: string, path: string, opts: { jwt?: string; body?: unknown; jar?: Jar } = {}): Promise<Res | undefined> {
  const headers: Record<string, string> = {};
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (opts.jwt) headers['authorization'] = `Bearer ${opts.jwt}`;
  const cookie = opts.jar?.header();
  if (cookie) headers['cookie'] = cookie;
  const started = performance.now();
  return new Promise((resolve) => {
    const req = httpRequest(`${base}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        opts.jar?.store(([] as string[]).concat(res.headers['set-cookie'] ?? []));
        record(endpoint, res.statusCode!, performance.now() - started, text);
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, json, text });
      });
      res.on('error', (err: NodeJS.ErrnoException) => {
        record(endpoint, `network ${err.code ?? err.message}`, performance.now() - started, '');
        resolve(undefined);
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      record(endpoint, `network ${err.code ?? err.message}${req.reusedSocket ? ' (reused socket)' : ''}`, performance.now() - started, '');
      resolve(undefined);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// ---------------------------------------------------------------------------
// The service

interface Service {
  child: ChildProcess;
  pid: number;
  httpUrl: string;
  smtpPort: number;
  exited: Promise<number | string>;
  log: () => string;
}

function startService(dataDir: string): Promise<Service> {
  const limits = Object.fromEntries(RATE_LIMITED_ROUTES.map((r) => [`RATE_LIMIT_${r}`, '100000/60']));
  // As `npm start` runs it, plus any flags given for a diagnosis (e.g. --heapsnapshot-signal=SIGUSR2).
  const extra = (process.env['SOAK_NODE_FLAGS'] ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...extra, SERVER_MAIN], {
    env: {
      PATH: process.env['PATH'] ?? '',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      METRICS_TOKEN,
      // The soak is one client standing for many senders: the per-client SMTP limits would refuse it.
      ...BENCH_UNLIMITED,
      ...limits,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 64 * 1024) out = out.slice(-32 * 1024);
  };
  child.stderr!.on('data', keep);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    let head = '';
    child.stdout!.on('data', (d: Buffer) => {
      keep(d);
      head += d.toString();
      const m = /HTTP on (http:\/\/\S+), SMTP on port (\d+)/.exec(head);
      if (m) resolve({ child, pid: child.pid!, httpUrl: m[1]!.replace(/,$/, ''), smtpPort: Number(m[2]), exited, log: () => out });
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening:\n${out}`)));
  });
}

/** V8's heap in use and its old generation in use (kB), from the service's /metrics. */
async function heapKb(): Promise<{ heapKb: number; oldKb: number } | undefined> {
  const text = await new Promise<string | undefined>((resolve) => {
    const req = httpRequest(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` }, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
  if (text === undefined) return undefined;
  const kb = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? NaN : Number(line.slice(series.length + 1)) / 1024;
  };
  const heap = kb('temp_inbox_nodejs_heap_size_used_bytes');
  const old = kb('temp_inbox_nodejs_heap_space_size_used_bytes{space="old"}');
  return Number.isFinite(heap) && Number.isFinite(old) ? { heapKb: heap, oldKb: old } : undefined;
}

function rssKb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Load

let stopping = false;
let crashed: string | undefined;
const jitter = (ms: number) => ms * (0.75 + Math.random() * 0.5);
const sleepers = new Set<() => void>();
/** Waits ms, or less when the run is stopping. */
function pause(ms: number): Promise<void> {
  if (stopping) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sleepers.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    sleepers.add(done);
  });
}
function stop(): void {
  stopping = true;
  for (const wake of [...sleepers]) wake();
}

interface Inbox {
  address: string;
  jwt: string;
}

let messageSeq = 0;
function buildMail(to: string[]): SendMailOptions {
  const n = messageSeq++;
  const code = String(100000 + ((n * 7919) % 900000));
  const common = { from: '"Soak Sender" <soak@example.com>', to, messageId: `<soak-${n}-${Date.now()}@soak.example>` };
  switch (n % 3) {
    case 0:
      return { ...common, subject: `Your code ${n}`, text: `Hello,\n\nYour code is ${code}.\n\n${'Lorem ipsum dolor sit amet. '.repeat(n % 40)}\n` };
    case 1:
      return {
        ...common,
        subject: `Confirm your account (${n})`,
        text: `Confirm: https://app.example/confirm?token=${code}`,
        html: `<html><body><p>Hi,</p><p>Your code is <b>${code}</b>.</p><a href="https://app.example/confirm?token=${code}">Confirm</a>${'<p>filler</p>'.repeat(n % 50)}</body></html>`,
      };
    default:
      return {
        ...common,
        subject: `Invoice ${n}`,
        text: 'Invoice attached.',
        attachments: [{ filename: `invoice-${n}.bin`, content: Buffer.alloc(2048 + (n % 16) * 1024, n % 256), contentType: 'application/octet-stream' }],
      };
  }
}

async function smtpSender(transport: Transporter, inboxes: Inbox[], i: number): Promise<void> {
  for (let k = 0; !stopping; k++) {
    const to = k % 4 === 3 ? [inboxes[(i + k) % inboxes.length]!.address, inboxes[(i + k + 1) % inboxes.length]!.address] : [inboxes[(i + k) % inboxes.length]!.address];
    smtp.sent++;
    try {
      const info = (await transport.sendMail(buildMail(to))) as { response?: string };
      if (/^250[ -]/.test(info.response ?? '')) smtp.accepted++;
      else {
        smtp.failed++;
        noteError('SMTP DATA', 'smtp', info.response ?? '');
      }
    } catch (err) {
      smtp.failed++;
      noteError('SMTP', 'smtp', (err as Error).message);
    }
    await pause(jitter(SMTP_EVERY_MS));
  }
}

/** Everything on one inbox, in one sequence (so a delete never races a read). */
async function inboxWorker(inbox: Inbox): Promise<void> {
  for (let k = 1; !stopping; k++) {
    const list = await call('GET /api/mails', 'GET', '/api/mails?limit=10&offset=0', { jwt: inbox.jwt });
    const results = (list?.status === 200 ? list.json.results : []) as { uuid: string; metadata: string }[];
    if (results.length && k % 2 === 0) {
      const newest = results[0]!;
      const full = await call('GET /api/mail/{uuid}', 'GET', `/api/mail/${newest.uuid}`, { jwt: inbox.jwt });
      if (full?.status === 200 && JSON.parse(full.json.metadata).attachments.length) {
        await call('GET /api/attachment/{uuid}/{id}', 'GET', `/api/attachment/${newest.uuid}/0`, { jwt: inbox.jwt });
      }
    }
    if (results.length && k % 4 === 0) await call('DELETE /api/mails/{uuid}', 'DELETE', `/api/mails/${results.at(-1)!.uuid}`, { jwt: inbox.jwt });
    if (k % 10 === 0) await call('GET /api/settings', 'GET', '/api/settings', { jwt: inbox.jwt });
    if (k % 40 === 0) await call('DELETE /api/clear_inbox', 'DELETE', '/api/clear_inbox', { jwt: inbox.jwt });
    await pause(jitter(POLL_EVERY_MS));
  }
}

/** A browser: a session of up to 3 addresses, switches, a 4th address, then cleans up. */
async function sessionActor(): Promise<void> {
  while (!stopping) {
    const jar = new Jar();
    const created: Inbox[] = [];
    for (let i = 0; i < 4 && !stopping; i++) {
      const res = await call('POST /api/new_address', 'POST', '/api/new_address', { body: {}, jar });
      if (res?.status === 200) created.push(res.json as Inbox);
      await pause(jitter(400));
      if (i >= 1) await call('GET /api/session/addresses', 'GET', '/api/session/addresses', { jar });
    }
    for (let s = 0; s < 4 && !stopping && created.length >= 2; s++) {
      const target = created[created.length - 1 - (s % 3)]!;
      const sw = await call('POST /api/switch_address', 'POST', '/api/switch_address', { body: { address: target.address }, jar });
      if (sw?.status === 200) {
        // The jwt cookie now belongs to the address switched to.
        const settings = await call('GET /api/settings (cookie)', 'GET', '/api/settings', { jar });
        if (settings?.status === 200 && settings.json.address !== target.address) {
          checkFailures++;
          noteError('check: switch then settings', 'mismatch', `${settings.json.address} != ${target.address}`);
        }
      }
      await pause(jitter(400));
    }
    if (stopping) break;
    const listing = await call('GET /api/session/addresses', 'GET', '/api/session/addresses', { jar });
    if (listing?.status === 200 && listing.json.addresses.length !== Math.min(3, created.length)) {
      checkFailures++;
      noteError('check: session holds 3', 'mismatch', JSON.stringify(listing.json));
    }
    // Addresses are removed again so the database stays the same size.
    for (const c of created) await call('DELETE /api/delete_address', 'DELETE', '/api/delete_address', { jwt: c.jwt });
    await call('POST /api/logout', 'POST', '/api/logout', { jar });
    await pause(jitter(1000));
  }
}

/** Push: event streams held open and reconnected, long-poll waits. */
const push = { streams: 0, mailEvents: 0, waits: 0, woke: 0, timedOut: 0 };
const WATCHERS = 2;
const WAITERS = 2;
const STREAM_HOLD_MS = 20_000;
const WAIT_TIMEOUT_S = 5;

/**
 * A client holding GET /api/events open for about STREAM_HOLD_MS, then reconnecting
 * with the largest mail id it saw (as EventSource does with Last-Event-ID).
 */
async function eventWatcher(inbox: Inbox): Promise<void> {
  let lastId = 0;
  while (!stopping) {
    await new Promise<void>((resolve) => {
      const started = performance.now();
      let ours = false;
      const req = httpRequest(`${base}/api/events?since=${lastId}`, { headers: { authorization: `Bearer ${inbox.jwt}`, accept: 'text/event-stream' }, agent: false }, (res) => {
        record('GET /api/events', res.statusCode!, performance.now() - started, '');
        if (res.statusCode !== 200) {
          res.resume();
          return;
        }
        push.streams++;
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (d: string) => {
          buf += d;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const lines = buf.slice(0, i).split('\n');
            buf = buf.slice(i + 2);
            if (!lines.includes('event: mail')) continue;
            const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) as { id: number; address: string };
            push.mailEvents++;
            if (data.address !== inbox.address) {
              checkFailures++;
              noteError('check: event for its own address', 'mismatch', `${data.address} != ${inbox.address}`);
            }
            lastId = Math.max(lastId, data.id);
          }
        });
      });
      const hangUp = () => {
        ours = true;
        req.destroy();
      };
      const timer = setTimeout(hangUp, jitter(STREAM_HOLD_MS));
      sleepers.add(hangUp);
      req.on('close', () => {
        clearTimeout(timer);
        sleepers.delete(hangUp);
        resolve();
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (!ours) record('GET /api/events', `network ${err.code ?? err.message}`, performance.now() - started, '');
      });
      req.end();
    });
    await pause(jitter(500));
  }
}

/** A test waiting for its next mail: GET /api/mails/wait with the largest id seen. */
async function waiter(inbox: Inbox): Promise<void> {
  let since = 0;
  while (!stopping) {
    push.waits++;
    const res = await call('GET /api/mails/wait', 'GET', `/api/mails/wait?since=${since}&timeout=${WAIT_TIMEOUT_S}`, { jwt: inbox.jwt });
    if (res?.status === 200) {
      push.woke++;
      since = Math.max(since, ...(res.json.results as { id: number }[]).map((m) => m.id));
    } else if (res?.status === 204) push.timedOut++;
    else await pause(500);
  }
}

// ---------------------------------------------------------------------------
// Report

const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const percentile = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const mb = (kb: number) => (kb / 1024).toFixed(1);

function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------

async function main(): Promise<number> {
  if (!existsSync(SERVER_MAIN)) {
    process.stderr.write(`soak: ${SERVER_MAIN} is missing; run "npm run build" (or "npm run soak") first\n`);
    return 2;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'temp-inbox-soak-'));
  cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  const service = await startService(dataDir);
  const previousCleanup = cleanup;
  cleanup = () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    previousCleanup();
  };
  const interrupt = () => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  base = service.httpUrl;
  void service.exited.then((code) => {
    if (!stopping) {
      crashed = `the service exited with ${code} during the run`;
      stop();
    }
  });
  const label = quick ? '30 s (--quick)' : `${minutes} min`;
  process.stdout.write(`soak: ${label} against pid ${service.pid} (${service.httpUrl}, SMTP ${service.smtpPort}); data in ${dataDir}\n`);

  const rss: { atMs: number; kb: number }[] = [];
  const heap: { atMs: number; heapKb: number; oldKb: number }[] = [];
  const startedAt = performance.now();
  const sampleRss = async () => {
    const atMs = Math.round(performance.now() - startedAt);
    const kb = rssKb(service.pid);
    if (kb !== undefined) rss.push({ atMs, kb });
    const h = await heapKb();
    if (h) heap.push({ atMs, ...h });
  };

  const inboxes: Inbox[] = [];
  for (let i = 0; i < INBOXES; i++) {
    const res = await call('POST /api/new_address', 'POST', '/api/new_address', { body: { name: `soak-${i}` } });
    if (res?.status !== 200) throw new Error(`could not create inbox soak-${i}: ${res?.status} ${res?.text}`);
    inboxes.push(res.json as Inbox);
  }
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: service.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: SMTP_CONNECTIONS, maxMessages: 500 });

  await sampleRss();
  const sampler = setInterval(() => {
    void sampleRss();
    void call('GET /health_check', 'GET', '/health_check');
    const last = rss.at(-1);
    const s = Math.round((performance.now() - startedAt) / 1000);
    if (!quick && s % 60 < RSS_EVERY_MS / 1000) {
      process.stdout.write(`  ${String(Math.round(s / 60)).padStart(3)} min: ${[...byStatus.values()].reduce((a, b) => a + b, 0)} requests, ${smtp.accepted} mails in, ${errorCount} errors, RSS ${last ? mb(last.kb) : '?'} MB\n`);
    }
  }, RSS_EVERY_MS);
  const deadline = setTimeout(stop, DURATION_MS);

  await Promise.all([
    ...Array.from({ length: SMTP_CONNECTIONS }, (_, i) => smtpSender(transport, inboxes, i)),
    ...inboxes.map((inbox) => inboxWorker(inbox)),
    ...Array.from({ length: SESSION_ACTORS }, () => sessionActor()),
    ...inboxes.slice(0, WATCHERS).map((inbox) => eventWatcher(inbox)),
    ...inboxes.slice(WATCHERS, WATCHERS + WAITERS).map((inbox) => waiter(inbox)),
  ]);
  clearTimeout(deadline);
  clearInterval(sampler);
  await sampleRss();
  const ranMs = Math.round(performance.now() - startedAt);
  transport.close();

  // Graceful stop: SIGTERM must end the process with 0.
  let exitCode: number | string | undefined;
  if (!crashed) {
    service.child.kill('SIGTERM');
    const killer = setTimeout(() => service.child.kill('SIGKILL'), 15_000);
    exitCode = await service.exited;
    clearTimeout(killer);
    if (exitCode !== 0) crashed = `SIGTERM ended the service with ${exitCode}`;
  }
  agent.destroy();
  process.off('SIGINT', interrupt);
  process.off('SIGTERM', interrupt);

  // RSS: median of the first window vs the last window.
  const first = rss.filter((r) => r.atMs <= WINDOW_MS).map((r) => r.kb);
  const last = rss.filter((r) => r.atMs >= ranMs - WINDOW_MS).map((r) => r.kb);
  const firstMedian = median(first);
  const lastMedian = median(last);
  const ratio = lastMedian / firstMedian;
  // Growth after the warm-up: the window that starts at WARMUP_MS against the last one.
  const lastFrom = ranMs - WINDOW_MS;
  const growth = <T extends { atMs: number }>(samples: T[], kb: (s: T) => number) => {
    const within = (from: number) => median(samples.filter((s) => s.atMs >= from && s.atMs <= from + WINDOW_MS).map(kb));
    const beforeKb = within(WARMUP_MS);
    const afterKb = within(lastFrom);
    return { beforeKb, afterKb, growthMb: (afterKb - beforeKb) / 1024 };
  };
  const rssGrowth = growth(rss, (r) => r.kb);
  const oldGrowth = growth(heap, (h) => h.oldKb);
  const heapGrowth = growth(heap, (h) => h.heapKb);
  // A missing measurement (NaN) fails too: the bound was not shown to hold.
  const memoryOk = rssGrowth.growthMb <= MAX_RSS_GROWTH_MB && oldGrowth.growthMb <= MAX_HEAP_GROWTH_MB;
  const totalRequests = [...byStatus.values()].reduce((a, b) => a + b, 0);

  const statusRows = [...byStatus].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => [s, String(n)]);
  const endpointRows = [...byEndpoint]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([ep, e]) => [
      ep,
      String(e.latencies.length),
      [...e.statuses].map(([s, n]) => `${s}:${n}`).join(' '),
      percentile(e.latencies, 50).toFixed(1),
      percentile(e.latencies, 99).toFixed(1),
    ]);
  const windowLabel = quick ? '10 s' : 'minute';
  const ok = errorCount === 0 && smtp.failed === 0 && !crashed && memoryOk;
  const span = (from: number) => `${(from / 1000).toFixed(0)}-${((from + WINDOW_MS) / 1000).toFixed(0)} s`;
  const change = (g: { beforeKb: number; afterKb: number; growthMb: number }, bound?: number) =>
    `${mb(g.beforeKb)} -> ${mb(g.afterKb)} MB (${g.growthMb >= 0 ? '+' : ''}${g.growthMb.toFixed(1)}${bound === undefined ? '' : `, bound +${bound}`})`;

  const out: string[] = [];
  out.push('', `temp-inbox soak: ${label}, ran ${(ranMs / 1000).toFixed(0)} s, Node ${process.version}, ${cpus().length} CPUs`, '');
  out.push(textTable(['status', 'responses'], [...statusRows, ['total', String(totalRequests)]]), '');
  out.push(textTable(['endpoint', 'requests', 'statuses', 'p50 ms', 'p99 ms'], endpointRows), '');
  out.push(
    textTable(
      ['measure', 'value'],
      [
        ['SMTP messages sent / 250 / failed', `${smtp.sent} / ${smtp.accepted} / ${smtp.failed}`],
        ['error responses (>= 400 except 429, network errors)', String(errorCount - smtp.failed - checkFailures)],
        ['rate-limited (429)', String(rateLimited)],
        ['event streams opened / mail events received', `${push.streams} / ${push.mailEvents}`],
        ['waits / answered with mail / timed out (204)', `${push.waits} / ${push.woke} / ${push.timedOut}`],
        ['failed checks (switch/settings, session size, event address)', String(checkFailures)],
        [`RSS median, first ${windowLabel} (${first.length} samples)`, `${mb(firstMedian)} MB`],
        [`RSS median, last ${windowLabel} (${last.length} samples)`, `${mb(lastMedian)} MB`],
        ['RSS ratio last / first', ratio.toFixed(3)],
        ['RSS min / max over the run', `${mb(Math.min(...rss.map((r) => r.kb)))} / ${mb(Math.max(...rss.map((r) => r.kb)))} MB`],
        [`RSS median, ${span(WARMUP_MS)} -> ${span(lastFrom)}`, change(rssGrowth, MAX_RSS_GROWTH_MB)],
        ['V8 old generation in use, same windows', change(oldGrowth, MAX_HEAP_GROWTH_MB)],
        ['V8 heap in use, same windows', change(heapGrowth)],
        ['memory', memoryOk ? 'within its bounds' : 'GREW PAST ITS BOUND (or was not measured)'],
        ['service', crashed ?? `stopped cleanly (exit ${exitCode})`],
        ['result', ok ? 'PASS' : 'FAIL'],
      ],
    ),
  );
  if (errors.length) {
    out.push('', `first ${errors.length} errors:`);
    for (const e of errors) out.push(`  +${(e.atMs / 1000).toFixed(1)}s ${e.what} -> ${e.status} ${JSON.stringify(e.body)}`);
  }
  if (crashed) out.push('', 'service output (tail):', service.log().slice(-4000));
  process.stdout.write(out.join('\n') + '\n');

  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const file = join(RESULTS_DIR, `soak-${stamp}${quick ? '-quick' : ''}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        kind: 'soak',
        quick,
        durationMs: DURATION_MS,
        ranMs,
        node: process.version,
        cpus: cpus().length,
        load: { inboxes: INBOXES, pollEveryMs: POLL_EVERY_MS, smtpConnections: SMTP_CONNECTIONS, smtpEveryMsPerConnection: SMTP_EVERY_MS, sessionActors: SESSION_ACTORS, eventWatchers: WATCHERS, waiters: WAITERS, rateLimits: '100000/60' },
        totalRequests,
        byStatus: Object.fromEntries(byStatus),
        byEndpoint: Object.fromEntries(
          [...byEndpoint].map(([ep, e]) => [ep, { requests: e.latencies.length, statuses: Object.fromEntries(e.statuses), p50Ms: percentile(e.latencies, 50), p99Ms: percentile(e.latencies, 99) }]),
        ),
        smtp,
        push,
        errorResponses: errorCount - smtp.failed - checkFailures,
        rateLimited,
        checkFailures,
        errors,
        rss: { windowMs: WINDOW_MS, firstMedianKb: firstMedian, lastMedianKb: lastMedian, ratio, samples: rss },
        memory: {
          warmupMs: WARMUP_MS,
          windowMs: WINDOW_MS,
          bounds: { rssGrowthMb: MAX_RSS_GROWTH_MB, oldGenerationGrowthMb: MAX_HEAP_GROWTH_MB },
          rss: rssGrowth,
          oldGeneration: oldGrowth,
          heapUsed: heapGrowth,
          heapSamples: heap,
          ok: memoryOk,
        },
        service: crashed ?? 'stopped cleanly',
        result: ok ? 'pass' : 'fail',
      },
      null,
      2,
    ) + '\n',
  );
  process.stdout.write(`\nwritten ${file}\n`);
  rmSync(dataDir, { recursive: true, force: true });
  return ok ? 0 : 1;
}

/** Kills the child and removes the data directory, whatever happened. */
let cleanup = () => {};

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    cleanup();
    process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
