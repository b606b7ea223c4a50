// 6d. Readers that never read (docs/security.md "Large answers"), part of the hostile bench:
// READERS raw connections each ask for a 10 MB mail and read nothing after the first
// bytes, on GET /api/mail/{uuid} (JSON with the raw message), /mailtm/sources/{id} and
// /mailtm/messages/{id}/download. Measured on the server's process (/proc): its RSS growth
// while they hold on, whether each was reset by the server after HTTP_SEND_STALL_TIMEOUT,
// and its RSS once they are gone. Before the answers were streamed from the store, 100 such
// readers took the server from 176 to 1,113 MB, still held after the sockets closed.
// Target: growth < 250 MB for 100 readers (under 2.5 MB each, where each held 9.5 MB),
// every reader answered 200 and ended by the server.
import { connect, type Socket } from 'node:net';
import { createAddress, getJson } from './lib/http.js';
import { memoryOf, sleep } from './lib/procs.js';
import { verdict, type Row } from './lib/report.js';
import { sendOnce } from './lib/smtp-client.js';
import { fmt, MB, round } from './lib/stats.js';
import { startTempInbox } from './lib/temp-inbox.js';

const READERS = 100;
const MESSAGE_BYTES = 10_000_000;
const STALL_SECONDS = 3;
const GROWTH_TARGET = 250 * MB;

interface Reader {
  socket: Socket;
  /** Whether the answer's first bytes came (its status line). */
  answered: Promise<string>;
  /** How the connection ended once read again: reset by the server, or not ended. */
  ended: Promise<'reset' | 'closed' | 'open'>;
}

function unreadReader(port: number, path: string, jwt: string): Reader {
  const socket = connect({ host: '127.0.0.1', port });
  let error = '';
  socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? 'error'));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${jwt}\r\nAccept: application/json\r\n\r\n`);
  const answered = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk.toString('latin1').split('\r\n')[0]!);
    });
    socket.once('close', () => resolve('closed before an answer'));
  });
  const ended = new Promise<'reset' | 'closed' | 'open'>((resolve) => socket.once('close', () => resolve(error === 'ECONNRESET' ? 'reset' : 'closed')));
  return { socket, answered, ended };
}

function message(to: string): Buffer {
  const line = `${'x'.repeat(76)}\r\n`;
  return Buffer.from(`From: a@bench.example.com\r\nTo: ${to}\r\nSubject: large\r\n\r\n${line.repeat(Math.floor((MESSAGE_BYTES - 200) / line.length))}`);
}

interface RouteResult {
  before: number;
  peak: number;
  after: number;
  answered: number;
  /** The first line of each answer that was not a 200, by how often. */
  otherwise: Record<string, number>;
  reset: number;
  notEnded: number;
}

async function route(path: (uuid: string) => string, readers: number): Promise<RouteResult> {
  const server = await startTempInbox({ name: 'temp-inbox-unread', env: { HTTP_SEND_STALL_TIMEOUT: `${STALL_SECONDS}s`, HTTP_ANSWER_BYTES_PER_CLIENT: String(4096 * MB) } });
  const open: Reader[] = [];
  try {
    const { address, jwt } = await createAddress(server.httpUrl);
    await sendOnce(server.smtpPort, address, message(address));
    const list = await getJson<{ results: { uuid: string }[] }>(`${server.httpUrl}/api/mails?limit=1&offset=0`, jwt);
    const uuid = list.results[0]!.uuid;
    const port = Number(new URL(server.httpUrl).port);
    // One whole read first, so that what is measured is the readers, not first use.
    await getJson(`${server.httpUrl}/api/mail/${uuid}`, jwt);
    await sleep(500);
    const pid = server.child.pid;
    const before = memoryOf(pid).rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 100);
    for (let i = 0; i < readers; i++) open.push(unreadReader(port, path(uuid), jwt));
    const heads = await Promise.all(open.map((r) => r.answered));
    // Past the stall limit (checked a few times a limit), with a margin for a loaded machine.
    await sleep((STALL_SECONDS * 1.25 + 2) * 1000);
    clearInterval(sampler);
    peak = Math.max(peak, memoryOf(pid).rss);
    // Read again: a connection the server reset says so at once.
    for (const r of open) r.socket.resume();
    // On a loaded machine a reader may start to stall late (its answer's first parts take a while): time for that.
    const ends = await Promise.all(open.map((r) => Promise.race([r.ended, sleep((STALL_SECONDS * 2 + 10) * 1000).then(() => 'open' as const)])));
    await sleep(1500);
    return {
      before,
      peak,
      after: memoryOf(pid).rss,
      answered: heads.filter((h) => h.startsWith('HTTP/1.1 200')).length,
      otherwise: heads.filter((h) => !h.startsWith('HTTP/1.1 200')).reduce((n: Record<string, number>, h) => ((n[h] = (n[h] ?? 0) + 1), n), {}),
      reset: ends.filter((e) => e !== 'open').length,
      notEnded: ends.filter((e) => e === 'open').length,
    };
  } finally {
    for (const r of open) r.socket.destroy();
    await server.stop();
  }
}

export async function unreadAnswers(quick: boolean, log: (m: string) => void): Promise<{ rows: Row[]; details: Record<string, RouteResult> }> {
  const readers = quick ? 40 : READERS;
  const rows: Row[] = [];
  const details: Record<string, RouteResult> = {};
  const routes = [
    ['GET /api/mail/{uuid}', (uuid: string) => `/api/mail/${uuid}`],
    ['GET /mailtm/sources/{id}', (uuid: string) => `/mailtm/sources/${uuid}`],
    ['GET /mailtm/messages/{id}/download', (uuid: string) => `/mailtm/messages/${uuid}/download`],
  ] as const;
  // Quick mode: the first route only; the others are the same code behind other paths.
  for (const [name, path] of quick ? routes.slice(0, 1) : routes) {
    log(`${readers} readers that never read a 10 MB mail: ${name}`);
    const r = await route(path, readers);
    details[name] = r;
    const growth = r.peak - r.before;
    log(`RSS ${fmt(r.before / MB)} MB before, peak ${fmt(r.peak / MB)} MB, ${fmt(r.after / MB)} MB after; ${r.answered} answered 200 ${JSON.stringify(r.otherwise)}, ${r.reset} ended by the server, ${r.notEnded} not`);
    rows.push({
      bench: 'hostile',
      measure: `RSS growth, ${readers} unread answers of a 10 MB mail, ${name} (MB)`,
      ours: `+${fmt(growth / MB)} (${fmt(r.after / MB)} after closing)`,
      baseline: `${fmt(r.before / MB)} before`,
      result: `+${fmt(growth / MB)}; ${r.reset}/${readers} ended after HTTP_SEND_STALL_TIMEOUT ${STALL_SECONDS} s`,
      target: `< ${GROWTH_TARGET / MB}; all ended`,
      verdict: verdict(growth < GROWTH_TARGET && r.notEnded === 0 && r.answered === readers),
      values: { before: r.before, peak: r.peak, after: r.after, growthMB: round(growth / MB), answered: r.answered, ended: r.reset, notEnded: r.notEnded },
    });
  }
  return { rows, details };
}
