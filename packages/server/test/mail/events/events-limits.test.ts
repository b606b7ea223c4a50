// The limits on open event streams and long-poll waits (EVENTS_PER_CLIENT,
// EVENTS_PER_ADDRESS, EVENTS_PER_NODE; http/routes/push.ts): streams and waits
// count together; at the limit everything is admitted, one past it gets exactly
// 429 (client, address) or 503 (node) with Retry-After: 5 and a plain-text
// sentence; a refusal holds no slot, and a closed stream or answered wait frees
// exactly one. (input-limits.test.ts checks each limit's status on streams alone.)
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, METRICS_TOKEN, pushOpen, request, sendMail, serversStoppedAfter, untilPushOpen, type HttpResult, type TestServer } from '../../helpers/harness.js';
import { openEventStream, type EventStream } from '../../helpers/event-stream.js';

const start = serversStoppedAfter();
const streams: EventStream[] = [];
const waits: Promise<HttpResult>[] = [];
after(async () => {
  streams.forEach((s) => s.close());
  await Promise.allSettled(waits);
});

/** Opens a stream from `from` (a loopback address), kept open until the test ends or it is closed. */
async function stream(server: TestServer, jwt: string, from = '127.0.0.1'): Promise<EventStream> {
  const s = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` }, from);
  streams.push(s);
  return s;
}

/** Starts a long-poll wait and returns once the server holds it open (its /metrics says so); `answer` is its response. */
async function wait(server: TestServer, jwt: string, from = '127.0.0.1', timeout = 30): Promise<{ answer: Promise<HttpResult> }> {
  const open = (await pushOpen(server)).wait;
  const answer = request(server.httpUrl, `/api/mails/wait?timeout=${timeout}`, { jwt, localAddress: from });
  waits.push(answer);
  await untilPushOpen(server, { wait: open + 1 });
  return { answer };
}

/** A refused stream or wait: status, Retry-After 5, and exactly `text` as text/plain. */
function assertRefused(res: { status: number; type: string | undefined; retryAfter: string | undefined; body: string }, status: number, text: string, what: string): void {
  assert.deepEqual(res, { status, type: 'text/plain; charset=utf-8', retryAfter: '5', body: text }, what);
}
const ofStream = (s: EventStream) => ({ status: s.status, type: s.headers['content-type'], retryAfter: s.headers['retry-after'] as string | undefined, body: s.body });
const ofWait = (r: HttpResult) => ({ status: r.status, type: r.headers.get('content-type') ?? undefined, retryAfter: r.headers.get('retry-after') ?? undefined, body: r.text });

describe('event stream and wait limits', () => {
  it('EVENTS_PER_CLIENT: a stream and a wait fill 2; the third of either is 429; another client is unaffected; a closed stream frees exactly one slot', async () => {
    const server = await start({ EVENTS_PER_CLIENT: '2', METRICS_TOKEN });
    const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map(() => createAddress(server)));
    const text = 'At most 2 event streams and waits may be open from one client; close one first.';
    const first = await stream(server, a!.jwt);
    assert.equal(first.status, 200);
    const held = await wait(server, b!.jwt);
    assertRefused(ofStream(await stream(server, c!.jwt)), 429, text, 'a third stream');
    assertRefused(ofWait(await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt: c!.jwt })), 429, text, 'a third wait');
    assert.equal((await stream(server, c!.jwt, '127.0.0.2')).status, 200, 'another client');

    first.close();
    await untilPushOpen(server, { events: 1 });
    assert.equal((await stream(server, d!.jwt)).status, 200, 'the freed slot');
    assertRefused(ofStream(await stream(server, d!.jwt)), 429, text, 'and only one');
    // The wait still holds its slot until it is answered.
    await server.close();
    assert.equal((await held.answer).status, 204);
  });

  it('EVENTS_PER_ADDRESS: 2 on one address from different clients; the third is 429 from any client; a refusal does not keep the client slot it took', async () => {
    const server = await start({ EVENTS_PER_ADDRESS: '2', EVENTS_PER_CLIENT: '3', METRICS_TOKEN });
    const a = await createAddress(server);
    const b = await createAddress(server);
    const text = 'At most 2 event streams and waits may be open on one address; close one first.';
    assert.equal((await stream(server, a.jwt, '127.0.0.1')).status, 200);
    const held = await wait(server, a.jwt, '127.0.0.2');
    assertRefused(ofStream(await stream(server, a.jwt, '127.0.0.3')), 429, text, 'a third stream, from a third client');
    // From 127.0.0.1 (one slot of 3 used), two refusals on a, then two streams on b: both fit
    // only if the refusals gave back the client slot they had taken first.
    assertRefused(ofStream(await stream(server, a.jwt)), 429, text, 'a third on a from 127.0.0.1');
    assertRefused(ofWait(await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt: a.jwt })), 429, text, 'a wait on a from 127.0.0.1');
    assert.equal((await stream(server, b.jwt)).status, 200);
    assert.equal((await stream(server, b.jwt)).status, 200);
    assertRefused(ofStream(await stream(server, b.jwt)), 429, 'At most 3 event streams and waits may be open from one client; close one first.', 'now the client is full');
    await server.close();
    assert.equal((await held.answer).status, 204);
  });

  it('EVENTS_PER_NODE: 2 in all from different clients and addresses; the third stream or wait is 503; an answered wait frees its slot', async () => {
    const server = await start({ EVENTS_PER_NODE: '2', METRICS_TOKEN });
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => createAddress(server)));
    const text = 'Too many open event streams on this server; retry later.';
    assert.equal((await stream(server, a!.jwt, '127.0.0.1')).status, 200);
    const held = await wait(server, b!.jwt, '127.0.0.2');
    assertRefused(ofStream(await stream(server, c!.jwt, '127.0.0.3')), 503, text, 'a third stream');
    assertRefused(ofWait(await request(server.httpUrl, '/api/mails/wait?timeout=0', { jwt: c!.jwt, localAddress: '127.0.0.3' })), 503, text, 'a third wait');
    // A mail answers the wait (200), which gives its slot back.
    await sendMail(server.smtpPort, { to: [b!.address], message: message({ Subject: 'ends the wait' }, 'hi') });
    assert.equal((await held.answer).status, 200);
    assert.equal((await stream(server, c!.jwt, '127.0.0.3')).status, 200);
    assertRefused(ofStream(await stream(server, c!.jwt, '127.0.0.4')), 503, text, 'full again');
  });
});
