// The headers every event stream is sent with (docs/api.md "GET /api/events"; docs/deploy.md:
// a proxy in front must not buffer it): text/event-stream, Cache-Control: no-store and
// X-Accel-Buffering: no, which tells nginx and its kind to pass each event on as it is written.
// Both streams: our own /api/events and the mail.tm-compatible Mercure hub.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, DOMAIN, request, sendMail, message, startTestServer, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';

/** Asserts the three headers, exactly, on a stream that was admitted. */
function assertStreamHeaders(stream: EventStream, what: string): void {
  assert.equal(stream.status, 200, `${what}: ${stream.body}`);
  assert.deepEqual(
    { type: stream.headers['content-type'], cache: stream.headers['cache-control'], buffering: stream.headers['x-accel-buffering'] },
    { type: 'text/event-stream; charset=utf-8', cache: 'no-store', buffering: 'no' },
    what,
  );
}

describe('event streams: headers for proxies', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: DOMAIN });
  });
  after(async () => server?.close());

  it('GET /api/events is sent with X-Accel-Buffering: no (and no-store), and its events come through', async () => {
    const { address, jwt } = await createAddress(server);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    try {
      assertStreamHeaders(stream, '/api/events');
      await stream.next('ready');
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'streamed' }, 'x') });
      assert.equal(JSON.parse(JSON.parse((await stream.next('mail')).data).metadata).subject, 'streamed');
    } finally {
      stream.close();
    }
  });

  it("the mail.tm Mercure hub's stream is sent with the same headers", async () => {
    const address = `stream-headers@${DOMAIN}`;
    const password = 'a long enough password';
    const created = await request(server.httpUrl, '/mailtm/accounts', { method: 'POST', body: { address, password }, headers: { accept: 'application/json' } });
    assert.equal(created.status, 201, created.text);
    const login = await request(server.httpUrl, '/mailtm/token', { method: 'POST', body: { address, password } });
    assert.equal(login.status, 200, login.text);
    const { id, token } = login.json as { id: string; token: string };
    const stream = await openEventStream(server.httpUrl, `/mailtm/.well-known/mercure?topic=${encodeURIComponent(`/accounts/${id}`)}`, { authorization: `Bearer ${token}` });
    try {
      assertStreamHeaders(stream, 'the Mercure hub');
    } finally {
      stream.close();
    }
  });
});
