// Prometheus metrics at GET /metrics (docs/decisions.md "Beyond the interface"): off unless
// METRICS_TOKEN is set, then only for that Bearer token; counts what really happened.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../../src/config/index.js';
import { createAddress, message, request, sendMail, SmtpClient, startTestServer, untilPushOpen, type TestServer } from '../helpers/harness.js';
import { openEventStream } from '../helpers/event-stream.js';

const TOKEN = 'metrics-token-0123456789';

/** The value of one series in a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  let server: TestServer;
  const scrape = async () => {
    const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    return res.text;
  };
  before(async () => {
    server = await startTestServer({ METRICS_TOKEN: TOKEN });
  });
  after(async () => server?.close());

  it('is refused without the token, or with a wrong one (401 text)', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `bearer ${TOKEN}`]) {
      const res = await request(server.httpUrl, '/metrics', authorization === undefined ? {} : { headers: { authorization } });
      assert.equal(res.status, 401, String(authorization));
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    }
  });

  it('serves the Prometheus text format with process and store series', async () => {
    const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(res.text, 'temp_inbox_store_info{store="sqlite"}'), 1);
    assert.ok((sample(res.text, 'temp_inbox_process_resident_memory_bytes') ?? 0) > 0);
    // Not part of the API's description.
    assert.equal((await request(server.httpUrl, '/openapi.json')).json.paths['/metrics'], undefined);
  });

  it('counts SMTP outcomes, refused recipients, stored copies and HTTP requests by route', async () => {
    const before = await scrape();
    const a = await createAddress(server);
    const b = await createAddress(server);
    await sendMail(server.smtpPort, { to: [a.address, b.address], message: message({ Subject: 'two copies' }, 'hi') });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO metrics.test');
    await smtp.command('MAIL FROM:<x@example.com>');
    assert.equal((await smtp.command('RCPT TO:<nobody@temp-inbox.localhost>')).code, 550);
    await smtp.quit();
    for (let i = 0; i < 3; i++) assert.equal((await request(server.httpUrl, '/api/mails?limit=5&offset=0', { jwt: a.jwt })).status, 200);
    assert.equal((await request(server.httpUrl, '/api/mail/not-a-uuid', { jwt: a.jwt })).status, 404);
    const now = await scrape();
    const delta = (series: string) => (sample(now, series) ?? 0) - (sample(before, series) ?? 0);
    assert.equal(delta('temp_inbox_smtp_messages_total{outcome="stored"}'), 1);
    assert.equal(delta('temp_inbox_mails_stored_total'), 2);
    assert.equal(delta('temp_inbox_smtp_recipients_refused_total'), 1);
    assert.equal(delta('temp_inbox_http_requests_total{method="GET",route="/api/mails",status="200"}'), 3);
    assert.equal(delta('temp_inbox_http_requests_total{method="GET",route="/api/mail/:uuid",status="404"}'), 1);
    assert.equal(delta('temp_inbox_http_request_duration_seconds_count{route="/api/mails"}'), 3);
  });

  it('counts a message over MAX_MESSAGE_BYTES as too_large', async () => {
    const small = await startTestServer({ METRICS_TOKEN: TOKEN, MAX_MESSAGE_BYTES: '1000' });
    try {
      const { address } = await createAddress(small);
      const smtp = await SmtpClient.connect(small.smtpPort);
      await smtp.command('EHLO metrics.test');
      await smtp.command('MAIL FROM:<x@example.com>');
      await smtp.command(`RCPT TO:<${address}>`);
      await smtp.command('DATA');
      assert.equal((await smtp.data(message({ Subject: 'big' }, 'x'.repeat(1500)))).code, 552);
      await smtp.quit();
      // Past twice the limit the connection is closed (552 5.3.4): too large all the same.
      const past = await SmtpClient.connect(small.smtpPort);
      await past.command('EHLO metrics.test');
      await past.command('MAIL FROM:<x@example.com>');
      await past.command(`RCPT TO:<${address}>`);
      await past.command('DATA');
      assert.equal((await past.data(message({ Subject: 'bigger' }, 'x'.repeat(5000)))).code, 552);
      await past.quit();
      const text = (await request(small.httpUrl, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
      assert.equal(sample(text, 'temp_inbox_smtp_messages_total{outcome="too_large"}'), 2);
      assert.equal(sample(text, 'temp_inbox_smtp_messages_total{outcome="stored"}'), 0);
    } finally {
      await small.close();
    }
  });

  it('reports open event streams and waits', async () => {
    const { jwt, address } = await createAddress(server);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    await stream.next('ready');
    // A wait long enough that no pause of a busy machine ends it before it is scraped; a mail ends it.
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=60', { jwt });
    // Scraped until the wait is in (it is admitted a moment after it is sent), then exactly.
    await untilPushOpen(server, { wait: 1 }, TOKEN);
    let text = await scrape();
    assert.equal(sample(text, 'temp_inbox_push_open{kind="events"}'), 1);
    assert.equal(sample(text, 'temp_inbox_push_open{kind="wait"}'), 1);
    stream.close();
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'ends the wait' }, 'hi') });
    assert.equal((await waiting).status, 200);
    // The stream is released when the server sees its connection close.
    await untilPushOpen(server, { events: 0 }, TOKEN);
    text = await scrape();
    assert.equal(sample(text, 'temp_inbox_push_open{kind="events"}'), 0);
    assert.equal(sample(text, 'temp_inbox_push_open{kind="wait"}'), 0);
  });
});

describe('without METRICS_TOKEN', () => {
  it('has no /metrics (404), and a short token is refused at start-up', async () => {
    const server = await startTestServer();
    try {
      const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 404);
    } finally {
      await server.close();
    }
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), (err: unknown) => err instanceof ConfigError && /METRICS_TOKEN/.test(err.message));
  });
});
