// Push and long-poll (docs/decisions.md "Beyond the interface"): GET /api/events streams an
// address's mail events over Server-Sent Events, GET /api/mails/wait answers as soon
// as newer mail is there. Real SMTP in, real HTTP out, on SQLite.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createAddress, message, METRICS_TOKEN, pushOpen, request, sendMail, startTestServer, testClock, untilPushOpen, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';

/** The body of a chunked HTTP response as far as it arrived; complete when its last (empty) chunk came. */
function dechunk(body: Buffer): { data: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    assert.ok(Number.isInteger(size), `a chunk size at byte ${at}`);
    if (size === 0) return { data: Buffer.concat(parts), complete: true };
    parts.push(body.subarray(eol + 2, Math.min(eol + 2 + size, body.length)));
    if (eol + 2 + size + 2 > body.length) break;
    at = eol + 2 + size + 2;
  }
  return { data: Buffer.concat(parts), complete: false };
}

const mailTo = (server: TestServer, address: string, subject: string) =>
  sendMail(server.smtpPort, { to: [address], message: message({ Subject: subject }, `${subject}: your code is 482913`) });

describe('GET /api/events and GET /api/mails/wait', () => {
  let server: TestServer;
  const streams: EventStream[] = [];
  const open = async (path: string, headers: Record<string, string> = {}) => {
    const s = await openEventStream(server.httpUrl, path, headers);
    streams.push(s);
    return s;
  };
  const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

  before(async () => {
    server = await startTestServer({ EVENTS_HEARTBEAT: '1s', METRICS_TOKEN });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  it('streams a mail the moment SMTP answers 250, as the same item GET /api/mails lists', async () => {
    const { address, jwt } = await createAddress(server);
    const stream = await open('/api/events', bearer(jwt));
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    assert.equal(stream.headers['cache-control'], 'no-store');
    assert.equal(stream.headers['x-accel-buffering'], 'no', 'nginx is told not to buffer the stream (docs/api.md)');
    assert.ok(stream.headers['x-request-id']);
    const ready = await stream.next('ready');
    assert.deepEqual(JSON.parse(ready.data), { address });
    assert.equal(stream.retry, 2000);

    await mailTo(server, address, 'pushed');
    const event = await stream.next('mail');
    const list = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt });
    assert.deepEqual(JSON.parse(event.data), list.json.results[0]);
    assert.equal(event.id, String(list.json.results[0].id));
    assert.deepEqual(JSON.parse(JSON.parse(event.data).metadata).codes, ['482913']);
  });

  it("never tells one address about another's mail", async () => {
    const a = await createAddress(server);
    const b = await createAddress(server);
    const stream = await open('/api/events', bearer(a.jwt));
    await stream.next('ready');
    await mailTo(server, b.address, 'for b');
    await mailTo(server, a.address, 'for a');
    const event = await stream.next('mail');
    assert.equal(JSON.parse(event.data).address, a.address);
    assert.equal(stream.events.filter((e) => e.event === 'mail').length, 1);
  });

  it('sends mail_deleted, inbox_cleared, then address_deleted and ends the stream', async () => {
    const { address, jwt } = await createAddress(server);
    const stream = await open('/api/events', bearer(jwt));
    await stream.next('ready');
    await mailTo(server, address, 'one');
    await mailTo(server, address, 'two');
    const first = JSON.parse((await stream.next('mail')).data);
    await stream.next('mail');
    assert.equal((await request(server.httpUrl, `/api/mails/${first.uuid}`, { method: 'DELETE', jwt })).status, 200);
    assert.deepEqual(JSON.parse((await stream.next('mail_deleted')).data), { uuid: first.uuid });
    assert.equal((await request(server.httpUrl, '/api/clear_inbox', { method: 'DELETE', jwt })).status, 200);
    assert.deepEqual(JSON.parse((await stream.next('inbox_cleared')).data), {});
    assert.equal((await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt })).status, 200);
    await stream.next('address_deleted');
    await stream.ended;
    // The token is dead now: a reconnect is refused.
    const again = await open('/api/events', bearer(jwt));
    assert.equal(again.status, 401);
  });

  it('replays what was missed: since=, or Last-Event-ID on reconnect, oldest first, once each', async () => {
    const { address, jwt } = await createAddress(server);
    for (const s of ['r1', 'r2', 'r3']) await mailTo(server, address, s);
    const list = (await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt })).json.results as { id: number; uuid: string }[];
    const [newest, middle, oldest] = list;

    const bySince = await open(`/api/events?since=${oldest!.id}`, bearer(jwt));
    await bySince.next('ready');
    assert.deepEqual([(await bySince.next('mail')).id, (await bySince.next('mail')).id], [String(middle!.id), String(newest!.id)]);

    const byHeader = await open('/api/events', { ...bearer(jwt), 'last-event-id': String(middle!.id) });
    await byHeader.next('ready');
    assert.equal(JSON.parse((await byHeader.next('mail')).data).uuid, newest!.uuid);

    const all = await open('/api/events?since=0', bearer(jwt));
    await mailTo(server, address, 'r4');
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(Number((await all.next('mail')).id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.equal(new Set(ids).size, 4);
    // The next event is the next mail: nothing was sent twice in between.
    await mailTo(server, address, 'r5');
    const r5 = Number((await all.next('mail')).id);
    assert.deepEqual(all.events.filter((e) => e.event === 'mail').map((e) => Number(e.id)), [...ids, r5], 'no mail is sent twice');

    // A Last-Event-ID that is not a mail id is ignored: live events only.
    const odd = await open('/api/events', { ...bearer(jwt), 'last-event-id': 'abc' });
    await odd.next('ready');
    await mailTo(server, address, 'r6');
    await odd.next('mail');
    assert.deepEqual(
      odd.events.map((e) => (e.event === 'mail' ? JSON.parse(JSON.parse(e.data).metadata).subject : e.event)),
      ['ready', 'r6'],
      'nothing replayed',
    );
  });

  it('accepts the jwt cookie, and refuses missing, malformed or forged credentials with 401 text', async () => {
    const { jwt } = await createAddress(server);
    const byCookie = await open('/api/events', { cookie: `jwt=${jwt}` });
    assert.equal(byCookie.status, 200);
    await byCookie.next('ready');
    for (const headers of [{}, { authorization: `Token ${jwt}` }, bearer(`${jwt.slice(0, -2)}xx`)]) {
      const s = await open('/api/events', headers);
      assert.equal(s.status, 401);
      assert.match(String(s.headers['content-type']), /^text\/plain/);
      assert.ok(s.body.length > 0);
      const w = await request(server.httpUrl, '/api/mails/wait?timeout=0', { headers });
      assert.equal(w.status, 401);
    }
  });

  it('refuses bad query values with 400 text', async () => {
    const { jwt } = await createAddress(server);
    for (const q of ['since=-1', 'since=abc', 'since=1.5', 'since=0x10']) {
      const s = await open(`/api/events?${q}`, bearer(jwt));
      assert.equal(s.status, 400, q);
      assert.match(String(s.headers['content-type']), /^text\/plain/);
    }
    for (const q of ['timeout=61', 'timeout=-1', 'timeout=1e1', 'since=', 'since=x&timeout=1']) {
      const res = await request(server.httpUrl, `/api/mails/wait?${q}`, { jwt });
      assert.equal(res.status, 400, q);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    }
  });

  it('sends a keep-alive comment every EVENTS_HEARTBEAT', async () => {
    const { jwt } = await createAddress(server);
    const stream = await open('/api/events', bearer(jwt));
    await stream.next('ready');
    // Waited for, not slept on: two heartbeats of 1 s, and none before its time.
    const started = Date.now();
    while (stream.comments.length < 2) {
      assert.ok(Date.now() - started < 10_000, `comments after 10 s: ${stream.comments.join(',')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(Date.now() - started >= 1900, `two heartbeats took ${Date.now() - started} ms`);
    assert.deepEqual(stream.comments, ['keep-alive', 'keep-alive']);
  });

  it('wait: answers at once when newer mail is there, and only with mail newer than since', async () => {
    const { address, jwt } = await createAddress(server);
    await mailTo(server, address, 'w1');
    await mailTo(server, address, 'w2');
    const all = await request(server.httpUrl, '/api/mails/wait?timeout=5', { jwt });
    assert.equal(all.status, 200);
    assert.equal(all.headers.get('cache-control'), 'no-store');
    assert.equal(all.json.count, 2);
    assert.equal(all.json.results.length, 2);
    const [newest, oldest] = all.json.results;
    assert.ok(newest.id > oldest.id);
    const after = await request(server.httpUrl, `/api/mails/wait?since=${oldest.id}&timeout=5`, { jwt });
    assert.deepEqual(after.json, { results: [newest], count: 2 });
  });

  it('wait: 204 with no body when nothing newer arrives within timeout', async () => {
    const { address, jwt } = await createAddress(server);
    const none = await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt });
    assert.equal(none.status, 204);
    assert.equal(none.text, '');
    await mailTo(server, address, 'old');
    const newest = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0];
    const started = Date.now();
    const later = await request(server.httpUrl, `/api/mails/wait?since=${newest.id}&timeout=1`, { jwt });
    assert.equal(later.status, 204);
    assert.ok(Date.now() - started >= 900, 'it waited for the timeout');
  });

  it('wait: wakes on the delivery and returns it, ignoring other addresses', async () => {
    const { address, jwt } = await createAddress(server);
    const other = await createAddress(server);
    let answered = false;
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=10', { jwt }).then((r) => {
      answered = true;
      return r;
    });
    await untilPushOpen(server, { wait: 1 });
    await mailTo(server, other.address, 'not yours');
    // A wait the mail had woken would be answered and released before the next request is served.
    assert.equal((await pushOpen(server)).wait, 1, 'mail to another address does not wake the wait');
    assert.equal(answered, false);
    const started = Date.now();
    await mailTo(server, address, 'yours');
    const res = await waiting;
    assert.ok(Date.now() - started < 2000);
    assert.equal(res.status, 200);
    assert.equal(res.json.results.length, 1);
    assert.equal(JSON.parse(res.json.results[0].metadata).subject, 'yours');
  });

  it('wait: 401 when the address is deleted while waiting', async () => {
    const { jwt } = await createAddress(server);
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=10', { jwt });
    await untilPushOpen(server, { wait: 1 });
    assert.equal((await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt })).status, 200);
    const res = await waiting;
    assert.equal(res.status, 401);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  });

  it('lists both in the OpenAPI document', async () => {
    const doc = (await request(server.httpUrl, '/openapi.json')).json;
    assert.ok(doc.paths['/api/events']?.get);
    assert.ok(doc.paths['/api/mails/wait']?.get);
    assert.ok(doc.paths['/api/events'].get.responses['200'].content['text/event-stream']);
  });
});

describe('push limits and shutdown', () => {
  it('ends a stream when its address expires (checked at each heartbeat): open at exactly ADDRESS_TTL, ended at the heartbeat after it', async () => {
    // The service's clock is the test's: the address's age is set, not waited for.
    const clock = testClock();
    const server = await startTestServer({ EVENTS_HEARTBEAT: '50ms', ADDRESS_TTL: '1h', SWEEP_INTERVAL: '1d' }, undefined, undefined, { now: clock.now });
    try {
      const created = clock.now();
      const { jwt } = await createAddress(server);
      const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      await stream.next('ready');
      let ended = false;
      void stream.ended.then(() => (ended = true));
      /** Waits for `n` more keep-alive comments: n heartbeats, each followed by its token check. */
      const heartbeats = async (n: number) => {
        const target = stream.comments.length + n;
        const deadline = Date.now() + 10_000;
        while (stream.comments.length < target && !ended) {
          assert.ok(Date.now() < deadline, `only ${stream.comments.length} of ${target} heartbeats`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      clock.set(created + 3_600_000);
      await heartbeats(3);
      assert.equal(ended, false, 'at exactly ADDRESS_TTL the address is alive and its stream open');
      assert.deepEqual(stream.comments.slice(-3), ['keep-alive', 'keep-alive', 'keep-alive']);
      clock.set(created + 3_600_000 + 1);
      await heartbeats(2);
      assert.equal(ended, true, 'one millisecond later the next heartbeat ended it');
      assert.deepEqual(
        stream.events.map((e) => e.event),
        ['ready'],
        'nothing but ready was sent',
      );
    } finally {
      await server.close();
    }
  });

  it('counts streams and waits under RATE_LIMIT_MAILS', async () => {
    const server = await startTestServer({ RATE_LIMIT_MAILS: '2/60' });
    const streams: EventStream[] = [];
    try {
      const { jwt } = await createAddress(server);
      streams.push(await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` }));
      assert.equal((await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt })).status, 204);
      const refused = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '60', 'the refusal blocks for one whole window');
      assert.equal((await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt })).status, 429);
    } finally {
      streams.forEach((s) => s.close());
      await server.close();
    }
  });

  it('holds at most 100 streams and waits open per client (429), and frees a slot when one closes', async () => {
    const server = await startTestServer({ METRICS_TOKEN });
    const streams: EventStream[] = [];
    try {
      const { jwt } = await createAddress(server);
      for (let i = 0; i < 99; i++) streams.push(await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` }));
      const waiting = request(server.httpUrl, '/api/mails/wait?timeout=3', { jwt });
      await untilPushOpen(server, { events: 99, wait: 1 });
      const refused = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      assert.equal(refused.status, 429);
      assert.match(refused.body, /At most 100/);
      assert.equal((await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt })).status, 429);
      // Another client (127.0.0.2) is not affected, on another address (this one is at EVENTS_PER_ADDRESS too).
      const other = await createAddress(server);
      assert.equal((await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt: other.jwt, localAddress: '127.0.0.2' })).status, 204);
      assert.equal((await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt, localAddress: '127.0.0.2' })).status, 429, 'the address is at its own limit');
      streams.pop()!.close();
      await untilPushOpen(server, { events: 98 });
      const again = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      streams.push(again);
      assert.equal(again.status, 200);
      assert.equal((await waiting).status, 204);
    } finally {
      streams.forEach((s) => s.close());
      await server.close();
    }
  });

  it('cuts a stream whose client stopped reading once over 1 MiB waits for it: the client has a clean prefix of the events, the stream is released, the other stream gets every event', async (t) => {
    // No keep-alive comments in between: the slow client's bytes are the events alone.
    const server = await startTestServer({ METRICS_TOKEN, EVENTS_HEARTBEAT: '1h' });
    const openStreams = async () => (await pushOpen(server)).events;
    try {
      const { address, jwt } = await createAddress(server);
      // A client that sends the request and then reads nothing (paused before any byte can arrive).
      const socket = connect(server.httpPort, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      const received: Buffer[] = [];
      socket.on('data', (c: Buffer) => received.push(c));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      socket.pause();
      socket.write(`GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${jwt}\r\n\r\n`);
      const healthy = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      await healthy.next('ready');
      assert.equal(await openStreams(), 2);
      // Mails with many long links make events of about 15 KB each (metadata is at most 16 KiB):
      // 600 of them are 9 MB, well past what the kernel's socket buffers absorb.
      const links = Array.from({ length: 50 }, (_, i) => `https://example.com/${i}/${'x'.repeat(1200)}`).join('\n');
      for (let i = 0; i < 600; i++) await sendMail(server.smtpPort, { to: [address], message: message({ Subject: `big ${i}` }, links) });
      const mails = [];
      for (let i = 0; i < 600; i++) mails.push(await healthy.next('mail', 10_000));
      // Every event has been written to both streams by now: the stalled one was cut and released.
      assert.equal(await openStreams(), 1, 'only the reading stream is open');

      // Drain what the kernel still held for the stalled client: then the server's close.
      socket.resume();
      await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the stalled stream was not closed')), 10_000))]);
      const bytes = Buffer.concat(received);
      const headEnd = bytes.indexOf('\r\n\r\n');
      const head = bytes.subarray(0, headEnd).toString('latin1');
      assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(head, /\r\ntransfer-encoding: chunked(\r\n|$)/i);
      const { data, complete } = dechunk(bytes.subarray(headEnd + 4));
      assert.equal(complete, false, 'the response was cut, not ended with its last chunk');

      // What arrived is the stream's beginning, whole events up to a cut inside one.
      const frames = [`retry: 2000\nevent: ready\ndata: ${JSON.stringify({ address })}`, ...mails.map((m) => `id: ${m.id}\nevent: mail\ndata: ${m.data}`)].map((f) => Buffer.from(`${f}\n\n`));
      let whole = 0;
      let at = 0;
      while (whole < frames.length && data.subarray(at, at + frames[whole]!.length).equals(frames[whole]!)) at += frames[whole++]!.length;
      const mailEvents = whole - 1;
      const rest = data.subarray(at);
      assert.ok(frames[whole]!.subarray(0, rest.length).equals(rest), `after ${mailEvents} whole mail events, the rest is the start of the next one`);
      assert.ok(mailEvents >= 1, 'the client was served until it fell behind');
      // Over 1 MiB of events waited for it when it was cut, and were dropped with it.
      const total = frames.reduce((n, f) => n + f.length, 0);
      assert.ok(total - data.length > 1024 * 1024, `received ${data.length} of ${total} bytes: more than 1 MiB was never sent`);
      assert.ok(mailEvents < 600 - Math.ceil((1024 * 1024) / Math.max(...frames.map((f) => f.length))), `${mailEvents} of 600 mail events`);
      t.diagnostic(`the stalled client received ${mailEvents} of 600 mail events (${data.length} of ${total} bytes) before the cut`);

      // The reading client is still served.
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'after' }, 'still here') });
      assert.match((await healthy.next('mail')).data, /after/);
      healthy.close();
    } finally {
      await server.close();
    }
  });

  it('stopping the server ends open streams and answers open waits with 204, promptly', async () => {
    const server = await startTestServer({ METRICS_TOKEN });
    const { jwt } = await createAddress(server);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    await stream.next('ready');
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=60', { jwt });
    await untilPushOpen(server, { events: 1, wait: 1 });
    const started = Date.now();
    await server.close();
    await stream.ended;
    assert.equal((await waiting).status, 204);
    assert.ok(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`);
    assert.equal(server.http.server.listening, false);
  });
});
