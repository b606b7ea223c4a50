// When a connection is greeted (SMTP_GREETING_DELAY, smtp/greeting.ts): at once by
// default, so a client that sends without waiting for the 220 is served; after the
// configured pause otherwise, with an early talker refused. Exactly one greeting
// either way, and none for a connection refused before it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { client, createAddress, serversStoppedAfter } from '../helpers/harness.js';

const start = serversStoppedAfter();

/** The subjects of an address's mail, newest first. */
async function subjects(server: { httpUrl: string }, jwt: string): Promise<string[]> {
  const res = await client(server)('/api/mails?limit=10&offset=0', { jwt });
  assert.equal(res.status, 200);
  return (res.json.results as { metadata: string }[]).map((m) => (JSON.parse(m.metadata) as { subject: string }).subject);
}

/**
 * A raw connection that records every byte it reads and when the first line came.
 * `openedAt` is taken just before connecting: the server cannot accept the connection,
 * nor start its greeting timer, any earlier (taken after the client's 'connect' event, it
 * could be several milliseconds after the server's accept on a busy machine).
 */
async function open(port: number): Promise<{ socket: Socket; text: () => string; firstLineAt: Promise<number>; closed: Promise<void>; openedAt: number }> {
  const openedAt = performance.now();
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  let firstLine: (at: number) => void;
  const firstLineAt = new Promise<number>((r) => (firstLine = r));
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    if (text.includes('\r\n')) firstLine(performance.now());
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, text: () => text, firstLineAt, closed, openedAt };
}

/** `promise`, or a failure naming `what` after 10 s (a test here never waits for ever). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within 10 s`)), 10_000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Waits (10 s at most) until the text read so far matches `re`. */
async function until(c: { text: () => string }, re: RegExp): Promise<void> {
  for (let i = 0; i < 1000 && !re.test(c.text()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.match(c.text(), re);
}

describe('SMTP greeting', () => {
  it('by default greets at once: a client that sends its whole transaction without waiting for the 220 is served, and greeted once', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server);
    const c = await open(server.smtpPort);
    // Everything in one write as the connection opens (smtp-server's fixed 100 ms
    // pause answered this with 421 "You talk too soon").
    c.socket.write(`EHLO client.test\r\nMAIL FROM:<s@example.com>\r\nRCPT TO:<${address}>\r\nDATA\r\n`);
    // The greeting first, then EHLO's multi-line 250, MAIL's and RCPT's 250 and DATA's 354.
    await until(c, /^354 /m);
    assert.match(c.text(), /^220 mx\.test ESMTP temp-inbox, receive only\r\n/, 'the greeting comes first, saying ESMTP once');
    c.socket.write('Subject: early\r\n\r\ncommands sent with the connection\r\n.\r\nQUIT\r\n');
    await within(c.closed, 'the close');
    const all = c.text().split('\r\n');
    assert.equal(all.filter((l) => l.startsWith('220 ')).length, 1, 'one greeting');
    assert.ok(!all.some((l) => l.startsWith('421')), c.text());
    assert.ok(all.includes('250 2.6.0 Ok: stored 1 copy'), c.text());
    assert.equal(all.at(-2), '221 2.0.0 Bye');
    assert.deepEqual(await subjects(server, jwt), ['early']);
  });

  it('with SMTP_GREETING_DELAY=400ms greets once, no sooner than 400 ms after the connection opened', async () => {
    const server = await start({ SMTP_GREETING_DELAY: '400ms' });
    const c = await open(server.smtpPort);
    const at = await within(c.firstLineAt, 'the greeting');
    assert.match(c.text(), /^220 mx\.test /);
    // The timer counts whole milliseconds of the event loop's clock: up to one early
    // against performance.now() (and one more for rounding).
    assert.ok(at - c.openedAt >= 398, `greeted after ${(at - c.openedAt).toFixed(1)} ms`);
    c.socket.write('NOOP\r\n');
    await until(c, /\r\n250 /);
    // Past smtp-server's own 100 ms timer too: still one greeting.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(c.text().split('\r\n').filter((l) => l.startsWith('220 ')).length, 1, c.text());
    assert.match(c.text(), /\r\n250 2\.0\.0 OK\r\n$/);
    c.socket.destroy();
  });

  it('with a delay an early talker gets 421 "You talk too soon" and is closed, and nothing it sent is stored', async () => {
    const server = await start({ SMTP_GREETING_DELAY: '1s' });
    const { address, jwt } = await createAddress(server);
    const c = await open(server.smtpPort);
    c.socket.write(`EHLO client.test\r\nMAIL FROM:<s@example.com>\r\nRCPT TO:<${address}>\r\nDATA\r\nSubject: early\r\n\r\nx\r\n.\r\n`);
    await within(c.closed, 'the close');
    assert.equal(c.text(), '421 mx.test You talk too soon\r\n');
    assert.ok(!c.text().includes('220 '), 'never greeted');
    assert.deepEqual(await subjects(server, jwt), []);
  });

  it('a connection refused past SMTP_MAX_CLIENTS gets its 421 and no greeting after it', async () => {
    const server = await start({ SMTP_MAX_CLIENTS: '1' });
    const first = await open(server.smtpPort);
    await within(first.firstLineAt, 'the greeting');
    assert.match(first.text(), /^220 /);
    const second = await open(server.smtpPort);
    await within(second.closed, 'the close');
    assert.match(second.text(), /^421 .*Too many connected clients/);
    assert.equal(second.text().split('\r\n').filter(Boolean).length, 1, second.text());
    first.socket.destroy();
  });
});
