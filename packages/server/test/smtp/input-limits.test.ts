// Every input-size limit is a named configuration value (docs/security.md "Limits"):
// each is tested at its value (accepted) and one past it (refused, with the reply
// the docs give), over real SMTP and HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { client, createAddress, message, openData, sendMail, serversStoppedAfter, SmtpClient, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';

const start = serversStoppedAfter();
/** One server per environment that several cases share (each with addresses of its own), started by the first that asks. */
const sharedServers = new Map<string, Promise<TestServer>>();
const shared = (env: Record<string, string>): Promise<TestServer> => {
  const key = JSON.stringify(env);
  if (!sharedServers.has(key)) sharedServers.set(key, start(env));
  return sharedServers.get(key)!;
};

describe('input limits: SMTP', () => {
  it('SMTP_MAX_LINE_BYTES: a command line of exactly the limit is read; one byte more gets 421 and the connection is closed', async () => {
    const server = await start({ SMTP_MAX_LINE_BYTES: '600' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([['EHLO client.test', 250]]);
    // The limit counts the line without its CRLF.
    assert.equal((await smtp.command(`NOOP ${'x'.repeat(600 - 5)}`)).code, 250);
    const past = await smtp.command(`NOOP ${'x'.repeat(601 - 5)}`);
    assert.equal(past.code, 421);
    assert.match(past.text, /line too long/i);
    await assert.rejects(smtp.command('NOOP'), /closed/, 'the connection is closed');
    assert.equal((await client(server)('/health_check')).status, 200);
  });

  it('SMTP_MAX_RECIPIENTS: recipient number N is accepted, N + 1 gets 452 4.5.3', async () => {
    const server = await start({ SMTP_MAX_RECIPIENTS: '120' });
    // Distinct recipients: a repeated one is not counted again.
    const addresses = await Promise.all(Array.from({ length: 121 }, () => createAddress(server)));
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
    ]);
    for (let i = 0; i < 120; i++) assert.equal((await smtp.command(`RCPT TO:<${addresses[i]!.address}>`)).code, 250, `recipient ${i + 1}`);
    assert.match((await smtp.command(`RCPT TO:<${addresses[120]!.address}>`)).text, /^452 4\.5\.3 /);
    await smtp.quit();
  });

  it('MAX_MESSAGE_BYTES: a message of exactly the limit is stored; one byte more gets 552 5.3.4 and is not', async () => {
    const limit = 20_000;
    const server = await shared({ MAX_MESSAGE_BYTES: String(limit) });
    const { address, jwt } = await createAddress(server);
    const sized = (n: number) => {
      const head = 'Subject: sized\r\n\r\n';
      return head + 'x'.repeat(n - head.length - 2) + '\r\n';
    };
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: sized(limit) })).code, 250);
    const smtp = await openData(server.smtpPort, address);
    assert.match((await smtp.data(sized(limit + 1))).text, /^552 5\.3\.4 /);
    await smtp.quit();
    assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json.count, 1);
  });

  it('MAX_MESSAGE_BYTES: an oversize message is read to its end up to twice the limit (552 5.3.4); past that it gets 552 5.3.4 at once and the connection is closed', async () => {
    const limit = 20_000;
    const server = await shared({ MAX_MESSAGE_BYTES: String(limit) });
    const { address, jwt } = await createAddress(server);
    const lines = (n: number) => `${'x'.repeat(98)}\r\n`.repeat(n);
    // Twice the limit in all: read to the end, then 552, and the session goes on.
    const within = await openData(server.smtpPort, address);
    assert.match((await within.data(`Subject: twice\r\n\r\n${lines(2 * limit / 100 - 1)}`)).text, /^552 5\.3\.4 /);
    assert.equal((await within.command('NOOP')).code, 250);
    await within.quit();
    // A stream that goes on and on: 552 once twice the limit is passed, long before it ends, and the connection closed.
    const past = await openData(server.smtpPort, address);
    past.write(`Subject: endless\r\n\r\n${lines(2 * limit / 100 + 10)}`);
    const closing = await past.reply();
    assert.match(closing.text, /^552 5\.3\.4 /);
    await assert.rejects(past.command('NOOP'), /closed/, 'the connection is closed');
    assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json.count, 0);
  });

  it('SMTP_RATE_BYTES counts an oversize message\'s bytes too: the next message past the budget gets 452 4.7.0', async () => {
    const server = await start({ MAX_MESSAGE_BYTES: '20000', SMTP_RATE_BYTES: '50000/60' });
    const { address, jwt } = await createAddress(server);
    const smtp = await openData(server.smtpPort, address);
    // 39,000 bytes, refused for its size, counted all the same.
    assert.match((await smtp.data(`Subject: big\r\n\r\n${`${'x'.repeat(98)}\r\n`.repeat(390)}`)).text, /^552 5\.3\.4 /);
    await smtp.script([
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    // 15,000 more: within the size limit, past the 50,000 of the window.
    assert.match((await smtp.data(`Subject: next\r\n\r\n${`${'x'.repeat(98)}\r\n`.repeat(150)}`)).text, /^452 4\.7\.0 /);
    await smtp.quit();
    assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json.count, 0);
  });
});

describe('input limits: HTTP', () => {
  it('HTTP_BODY_LIMIT: a body of exactly the limit is read; one byte more is 413 text/plain', async () => {
    const server = await start({ HTTP_BODY_LIMIT: '1000' });
    const api = client(server);
    const body = (n: number) => {
      const base = '{"pad":""}';
      return `{"pad":"${'x'.repeat(n - base.length)}"}`;
    };
    const ok = await api('/api/new_address', { method: 'POST', body: body(1000), headers: { 'content-type': 'application/json' } });
    assert.equal(ok.status, 200);
    const past = await api('/api/new_address', { method: 'POST', body: body(1001), headers: { 'content-type': 'application/json' } });
    assert.equal(past.status, 413);
    assert.match(past.headers.get('content-type') ?? '', /^text\/plain/);
  });

  it('HTTP_REQUEST_TIMEOUT: a body sent slowly within it is read; one trickled past it gets 408 and its connection closed; answers and waits are not limited', async () => {
    const server = await start({ HTTP_REQUEST_TIMEOUT: '2s', RATE_LIMITS: 'off' });
    const { jwt, address } = await createAddress(server);
    const body = JSON.stringify({ url: 'https://1.1.1.1/hook' });
    /** PUT /api/webhook over a raw socket, its body sent a byte every `gapMs`; the answer's status line (or '' when none came) and when the socket closed. */
    const trickle = (gapMs: number) =>
      new Promise<{ status: string; ms: number }>((resolve, reject) => {
        const t0 = performance.now();
        const socket = connect(server.httpPort, '127.0.0.1');
        let answer = '';
        let timer: NodeJS.Timeout | undefined;
        socket.on('data', (d) => (answer += d.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve({ status: answer.split('\r\n')[0] ?? '', ms: performance.now() - t0 });
        });
        socket.on('connect', () => {
          socket.write(`PUT /api/webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${jwt}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
          let i = 0;
          const next = () => {
            if (socket.destroyed) return;
            if (i < body.length) socket.write(body[i++]!);
            if (i < body.length) timer = setTimeout(next, gapMs);
          };
          next();
        });
        setTimeout(() => reject(new Error('no answer in 20 s')), 20_000).unref();
      });
    // About 0.9 s for the whole body: within 2 s.
    const within = await trickle(Math.floor(900 / body.length));
    assert.equal(within.status, 'HTTP/1.1 200 OK');
    // A byte every 200 ms (about 8 s in all): ended after 2 s, checked every 2 s, well before the body's end.
    const past = await trickle(200);
    assert.equal(past.status, 'HTTP/1.1 408 Request Timeout');
    assert.ok(past.ms >= 2000 && past.ms < 6000, `closed after ${past.ms.toFixed(0)} ms`);
    // A wait of 3 s and an event stream of 3 s outlast the timeout: it limits requests, not answers.
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    try {
      const wait = await client(server)('/api/mails/wait?timeout=3', { jwt });
      assert.equal(wait.status, 204);
      // The stream, open for over 3 s, still carries the next mail.
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'still open' }, 'x') });
      assert.equal(JSON.parse((await stream.next('mail', 10_000)).data).uuid.length, 36);
    } finally {
      stream.close();
    }
  });

  it('HTTP_MAX_PARAM_LENGTH: a uuid of exactly the limit is looked up; one character over the limit is 404', async () => {
    const atLimit = await start({ HTTP_MAX_PARAM_LENGTH: '36' });
    const under = await start({ HTTP_MAX_PARAM_LENGTH: '35' });
    for (const [server, expected] of [
      [atLimit, 200],
      [under, 404],
    ] as const) {
      const { address, jwt } = await createAddress(server);
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'p' }, 'x') });
      const api = client(server);
      const uuid = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
      assert.equal(uuid.length, 36);
      const res = await api(`/api/mail/${uuid}`, { jwt });
      assert.equal(res.status, expected, `HTTP_MAX_PARAM_LENGTH=${expected === 200 ? 36 : 35}`);
    }
  });

  it('GET /api/mails: limit 100 is served, 101 is 400 (interface "Limits")', async () => {
    const server = await shared({});
    const { jwt } = await createAddress(server);
    const api = client(server);
    assert.equal((await api('/api/mails?limit=100&offset=0', { jwt })).status, 200);
    assert.equal((await api('/api/mails?limit=101&offset=0', { jwt })).status, 400);
  });

  it('JWT_MAX_LENGTH: a token of exactly the limit is verified; a limit one shorter refuses it with 401', async () => {
    const probe = await shared({});
    const { jwt } = await createAddress(probe);
    const length = jwt.length;
    const exact = await start({ JWT_MAX_LENGTH: String(length) });
    const shorter = await start({ JWT_MAX_LENGTH: String(length - 1) });
    for (const [server, expected] of [
      [exact, 200],
      [shorter, 401],
    ] as const) {
      const created = await createAddress(server);
      assert.equal(created.jwt.length, length, 'tokens of the same shape have the same length');
      assert.equal((await client(server)('/api/settings', { jwt: created.jwt })).status, expected);
    }
  });
});

describe('input limits: event streams and waits', () => {
  const open = (server: TestServer, jwt: string) => openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });

  it('EVENTS_PER_CLIENT: stream number N is admitted, N + 1 is 429 with Retry-After', async () => {
    const server = await start({ EVENTS_PER_CLIENT: '3' });
    const addresses = await Promise.all([0, 1, 2, 3].map(() => createAddress(server)));
    const streams: EventStream[] = [];
    try {
      for (const a of addresses.slice(0, 3)) streams.push(await open(server, a.jwt));
      assert.deepEqual(
        streams.map((s) => s.status),
        [200, 200, 200],
      );
      const past = await open(server, addresses[3]!.jwt);
      streams.push(past);
      assert.equal(past.status, 429);
      assert.equal(past.headers['retry-after'], '5');
      assert.match(past.body, /At most 3 event streams and waits may be open from one client/);
    } finally {
      streams.forEach((s) => s.close());
    }
  });

  it('EVENTS_PER_ADDRESS: N on one address are admitted, N + 1 is 429; another address is unaffected', async () => {
    const server = await start({ EVENTS_PER_ADDRESS: '2' });
    const a = await createAddress(server);
    const b = await createAddress(server);
    const streams: EventStream[] = [];
    try {
      streams.push(await open(server, a.jwt), await open(server, a.jwt));
      const past = await open(server, a.jwt);
      streams.push(past);
      assert.equal(past.status, 429);
      assert.match(past.body, /At most 2 event streams and waits may be open on one address/);
      const wait = await client(server)('/api/mails/wait?timeout=0', { jwt: a.jwt });
      assert.equal(wait.status, 429, 'a wait counts too');
      const other = await open(server, b.jwt);
      streams.push(other);
      assert.equal(other.status, 200);
    } finally {
      streams.forEach((s) => s.close());
    }
  });

  it('EVENTS_PER_NODE: N in all are admitted, N + 1 is 503 with Retry-After', async () => {
    const server = await start({ EVENTS_PER_NODE: '2' });
    const a = await createAddress(server);
    const streams: EventStream[] = [];
    try {
      streams.push(await open(server, a.jwt), await open(server, a.jwt));
      const past = await open(server, a.jwt);
      streams.push(past);
      assert.equal(past.status, 503);
      assert.equal(past.headers['retry-after'], '5');
    } finally {
      streams.forEach((s) => s.close());
    }
  });
});

