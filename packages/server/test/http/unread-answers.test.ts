// A client that asks for a large mail and never reads the answer (docs/security.md "Large
// answers"): the server holds a part of the message, not the message, ends the answer once
// its reader has taken nothing for HTTP_SEND_STALL_TIMEOUT, gives the memory back when the
// connection closes, and sends one client no more than HTTP_ANSWER_BYTES_PER_CLIENT at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAddress, request, sendMail, SmtpClient, startTestServer, until, type TestServer } from '../helpers/harness.js';
import { RAW_CHUNK_BYTES } from '../../src/http/raw-json.js';
import { PART_BYTES } from '../../src/storage/parts.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
const STALL_MS = 2000;
const READERS = 40;
/**
 * Stalled readers measured at once, and what each may hold on the server: the part being
 * sent (PART_BYTES), an escaped chunk (up to 6 × RAW_CHUNK_BYTES) and the connection's own
 * objects (about 40 KiB). Before, each held 1.3-1.4 MB: the part in the socket, the next one
 * read ahead into the stream's buffer, and the row's first part.
 */
const STALLED = 20;
const HELD_BOUND_KIB = (PART_BYTES + 6 * RAW_CHUNK_BYTES) / 1024 + 64;

/** A 10 MB message of plain ASCII lines, as large mail mostly is (base64 attachments). */
function largeMessage(to: string): Buffer {
  const line = `${'x'.repeat(76)}\r\n`;
  return Buffer.from(`From: a@example.com\r\nTo: ${to}\r\nSubject: large\r\n\r\n${line.repeat(Math.floor((10_000_000 - 200) / line.length))}`);
}

/** A mail with a 7 MB attachment (base64 in lines of 76: about 9.6 MB as sent). */
function attachedMessage(to: string): Buffer {
  const data = Buffer.alloc(7_000_000, 'attachment bytes ').toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    `From: a@example.com\r\nTo: ${to}\r\nSubject: attached\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n` +
      `--b\r\nContent-Type: text/plain\r\n\r\nsee the file\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n` +
      `Content-Disposition: attachment; filename="big.bin"\r\n\r\n${data}\r\n--b--\r\n`,
  );
}

function rssMb(): number {
  gc();
  return process.memoryUsage().rss / MB;
}

/** What the heap and the buffers hold, after a collection. */
function heldMb(): number {
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.external) / MB;
}

interface UnreadReader {
  socket: Socket;
  /** The status line and headers of the answer (the first bytes that arrived). */
  head: Promise<string>;
  /** When the server's end of the connection closed. */
  serverClosed: Promise<number>;
  /** When this end closed. */
  closed: Promise<number>;
}

/** The server's end of each connection, by the client's port, as the server accepts them. */
function serverEnds(server: TestServer): Map<number, Socket> {
  const ends = new Map<number, Socket>();
  server.http.server.on('connection', (socket: Socket) => {
    const port = socket.remotePort!;
    ends.set(port, socket);
    socket.once('close', () => ends.get(port) === socket && ends.delete(port));
  });
  return ends;
}

/** Sends the request on a raw connection and reads nothing after the first bytes. */
async function unreadReader(port: number, ends: Map<number, Socket>, path: string, jwt: string, localAddress = '127.0.0.1'): Promise<UnreadReader> {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${jwt}\r\nAccept: application/json\r\n\r\n`);
  const head = new Promise<string>((resolve) =>
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk.toString('latin1').split('\r\n\r\n')[0]!);
    }),
  );
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  await until('the server accepted the connection', () => ends.has(socket.localPort!));
  const end = ends.get(socket.localPort!)!;
  const serverClosed = new Promise<number>((resolve) => end.once('close', () => resolve(Date.now())));
  return { socket, head, serverClosed, closed };
}

describe('answers that are never read', () => {
  let server: TestServer;
  let jwt: string;
  let uuid: string;
  let attached: string;
  let port: number;
  let ends: Map<number, Socket>;
  before(async () => {
    server = await startTestServer({ HTTP_SEND_STALL_TIMEOUT: `${STALL_MS / 1000}s`, HTTP_ANSWER_BYTES_PER_CLIENT: String(1024 * MB) });
    const created = await createAddress(server, { name: 'unread' });
    jwt = created.jwt;
    await sendMail(server.smtpPort, { to: [created.address], message: largeMessage(created.address) });
    uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    await sendMail(server.smtpPort, { to: [created.address], message: attachedMessage(created.address) });
    attached = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    port = Number(new URL(server.httpUrl).port);
    ends = serverEnds(server);
  });
  after(async () => server?.close());

  for (const [name, path] of [
    ['GET /api/mail/{uuid} (JSON with the raw message)', () => `/api/mail/${uuid}`],
    ['GET /mailtm/sources/{id}', () => `/mailtm/sources/${uuid}`],
    ['GET /mailtm/messages/{id}/download (the .eml)', () => `/mailtm/messages/${uuid}/download`],
    ['GET /api/attachment/{uuid}/0 (a 7 MB attachment)', () => `/api/attachment/${attached}/0`],
    ['GET /mailtm/messages/{id}/attachment/ATTACH000001', () => `/mailtm/messages/${attached}/attachment/ATTACH000001`],
  ] as const) {
    it(`${name}: ${READERS} readers that stop hold a bounded window each, are ended after the stall limit, and the memory comes back`, async () => {
      // Warmed up by one whole read, so that what is measured is the readers, not first use.
      const whole = await fetch(`${server.httpUrl}${path()}`, { headers: { authorization: `Bearer ${jwt}` } });
      assert.equal(whole.status, 200);
      assert.ok((await whole.arrayBuffer()).byteLength >= 7_000_000);
      const base = rssMb();
      const held = heldMb();
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss / MB)), 20);
      const opened = Date.now();
      const readers = await Promise.all(Array.from({ length: READERS }, () => unreadReader(port, ends, path(), jwt)));
      const heads = await Promise.all(readers.map((r) => r.head));
      for (const h of heads) assert.match(h, /^HTTP\/1\.1 200 /);
      // Each is ended by the server: nobody here closes them.
      const closedAt = await Promise.all(readers.map((r) => r.serverClosed));
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss / MB);
      for (const at of closedAt) assert.ok(at - opened >= STALL_MS, `ended ${at - opened} ms after the request, before the stall limit`);
      // The reader sees it too once it reads again: the connection was reset.
      for (const r of readers) r.socket.resume();
      await Promise.all(readers.map((r) => r.closed));
      // This process's own ends of them (and what they read) are not the server's memory.
      readers.length = 0;
      // Held whole, each reader kept the 10 MB message (and the JSON's copy of it): 400 MB and more.
      // Streamed, a part and a chunk each (about 1 MB), plus what the allocator keeps of first use.
      const grew = peak - base;
      assert.ok(grew < 150, `the server's memory grew by ${grew.toFixed(0)} MB for ${READERS} readers of a 10 MB mail`);
      // Given back once they are closed: what the server's objects and buffers hold (the
      // allocator may keep pages it was given back, which RSS still counts).
      await until('the buffers are given back', () => heldMb() - held < 20, 10_000);
    });
  }

  it('a reader that reads still gets the whole mail after the others stalled', async () => {
    const res = await fetch(`${server.httpUrl}/mailtm/messages/${uuid}/download`, { headers: { authorization: `Bearer ${jwt}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'message/rfc822');
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(Number(res.headers.get('content-length')), body.length);
    assert.ok(body.toString('latin1').includes('Subject: large\r\n'));
  });
});

/** A 10 MB delivery, whose 250 may take longer than the harness's 10 s wait for a reply on a loaded machine. */
async function sendLarge(port: number, to: string, message: Buffer): Promise<void> {
  const smtp = await SmtpClient.connect(port);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<sender@example.com>', 250],
      [`RCPT TO:<${to}>`, 250],
      ['DATA', 354],
    ]);
    // Past the harness's wait the reply is still on its way: read on for it.
    const final = await smtp.data(message).catch(() => smtp.reply(60_000));
    assert.equal(final.code, 250, final.text);
  } finally {
    await smtp.quit();
  }
}

/** KiB each stalled reader holds on the server (heap and buffers, after a collection), measured while every reader of `path` is stalled. */
async function heldPerStalledReader(server: TestServer, ends: Map<number, Socket>, path: string, jwt: string, readers: number): Promise<number> {
  const port = Number(new URL(server.httpUrl).port);
  const base = heldMb();
  const opened = await Promise.all(Array.from({ length: readers }, () => unreadReader(port, ends, path, jwt)));
  for (const h of await Promise.all(opened.map((r) => r.head))) assert.match(h, /^HTTP\/1\.1 200 /);
  // Stalled: every server end has bytes its reader does not take (the kernel's buffers are full),
  // and what the server holds has stopped changing (no part or chunk still on its way).
  const serverEnds = () => [...ends.values()].filter((e) => opened.some((r) => r.socket.localPort === e.remotePort));
  let last = Number.NaN;
  await until(
    'every answer stalls and what the server holds settles',
    () => {
      if (serverEnds().length !== readers || !serverEnds().every((e) => e.writableLength > 0)) return false;
      const now = heldMb();
      const settled = Math.abs(now - last) < 0.25;
      last = now;
      return settled;
    },
    30_000,
  );
  const perReader = ((last - base) * 1024) / readers;
  for (const r of opened) r.socket.destroy();
  await Promise.all(opened.map((r) => r.serverClosed));
  return perReader;
}

describe('what a stalled answer holds', () => {
  let server: TestServer;
  after(async () => server?.close());

  it(`a reader that stops holds one ${PART_BYTES / 1024} KiB part of the message on the server, not the next part read ahead and the first`, { timeout: 300_000 }, async (t) => {
    // The stall limit long enough not to end any reader while it is measured; the parse budget
    // long enough for the attachment to be decoded on a loaded machine.
    server = await startTestServer({ HTTP_SEND_STALL_TIMEOUT: '5m', HTTP_ANSWER_BYTES_PER_CLIENT: String(1024 * MB), PARSE_TIMEOUT: '60s' });
    const { address, jwt } = await createAddress(server, { name: 'held' });
    await sendLarge(server.smtpPort, address, largeMessage(address));
    const uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    await sendLarge(server.smtpPort, address, attachedMessage(address));
    const attachedUuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    const ends = serverEnds(server);
    for (const path of [`/mailtm/messages/${uuid}/download`, `/api/mail/${uuid}`, `/api/attachment/${attachedUuid}/0`]) {
      // Warmed up by one whole read and one stalled round, so that what is measured is the readers, not first use.
      const whole = await fetch(`${server.httpUrl}${path}`, { headers: { authorization: `Bearer ${jwt}` } });
      assert.equal(whole.status, 200);
      await whole.arrayBuffer();
      await heldPerStalledReader(server, ends, path, jwt, 4);
      const held = await heldPerStalledReader(server, ends, path, jwt, STALLED);
      t.diagnostic(`${path.replace(/[0-9a-f-]{36}/, '{id}')}: ${held.toFixed(0)} KiB held by each of ${STALLED} stalled readers`);
      assert.ok(held < HELD_BOUND_KIB, `${path}: each stalled reader holds ${held.toFixed(0)} KiB (bound ${HELD_BOUND_KIB} KiB)`);
    }
  });
});

describe('HTTP_ANSWER_BYTES_PER_CLIENT', () => {
  let server: TestServer;
  after(async () => server?.close());

  it('refuses a second large answer to a client with one in flight (429, Retry-After), not to another client, and again once it closes', async () => {
    // Room for one 10 MB answer, not two; the stall limit long enough not to end the first here.
    server = await startTestServer({ HTTP_ANSWER_BYTES_PER_CLIENT: String(15 * MB), HTTP_SEND_STALL_TIMEOUT: '1m' });
    const { address, jwt } = await createAddress(server, { name: 'capped' });
    await sendMail(server.smtpPort, { to: [address], message: largeMessage(address) });
    const uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    const port = Number(new URL(server.httpUrl).port);
    const ends = serverEnds(server);

    const first = await unreadReader(port, ends, `/api/mail/${uuid}`, jwt);
    assert.match(await first.head, /^HTTP\/1\.1 200 /);
    for (const path of [`/api/mail/${uuid}`, `/mailtm/sources/${uuid}`, `/mailtm/messages/${uuid}/download`]) {
      const refused = await request(server.httpUrl, path, { jwt, headers: { accept: 'application/json' } });
      assert.equal(refused.status, 429, `${path}: ${refused.status}`);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    }
    // Another client is not counted with it.
    const other = await request(server.httpUrl, `/api/mail/${uuid}`, { jwt, localAddress: '127.0.0.2' });
    assert.equal(other.status, 200);
    assert.ok((other.json.raw as string).includes('Subject: large'));
    // A small answer is not a large one.
    assert.equal((await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).status, 200);

    // The client closes its unread answer: its bytes are released with the connection.
    first.socket.destroy();
    await first.serverClosed;
    let again = 0;
    for (const deadline = Date.now() + 10_000; again !== 200 && Date.now() < deadline; ) {
      again = (await request(server.httpUrl, `/api/mail/${uuid}`, { jwt })).status;
    }
    assert.equal(again, 200);
  });
});
