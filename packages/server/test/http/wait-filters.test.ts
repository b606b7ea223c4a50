// Server-side filters of GET /api/mails/wait and GET /api/events (docs/api.md):
// `from`, `to` and `subject`, case-insensitive substrings; only matching mail answers
// a wait or is streamed. Real SMTP in, real HTTP out, on SQLite.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, METRICS_TOKEN, pushOpen, request, sendMail, startTestServer, untilPushOpen, type HttpResult, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';

interface Mail {
  from?: string;
  to?: string;
  subject: string;
}

describe('wait and event-stream filters: from, to, subject', () => {
  let server: TestServer;
  const streams: EventStream[] = [];
  before(async () => {
    server = await startTestServer({ METRICS_TOKEN });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  /** Delivers a mail over SMTP; `to` is the To: header (the envelope recipient is always `address`). */
  const deliver = (address: string, m: Mail) =>
    sendMail(server.smtpPort, { to: [address], message: message({ From: m.from ?? 'Someone <someone@example.org>', To: m.to ?? address, Subject: m.subject }, `${m.subject}: code 482913`) });

  const subjects = (res: HttpResult) => (res.json.results as { metadata: string }[]).map((r) => JSON.parse(r.metadata).subject as string);

  /** Starts a wait, delivers `others` (none of which may answer it), then `match`; returns the answer. */
  async function waitWith(query: string, others: Mail[], match: Mail) {
    const { address, jwt } = await createAddress(server);
    let answered = false;
    const waiting = request(server.httpUrl, `/api/mails/wait?timeout=20&${query}`, { jwt }).finally(() => (answered = true));
    // Held open by the server (subscribed, and it has looked), before any mail is sent.
    await untilPushOpen(server, { wait: 1 });
    for (const m of others) await deliver(address, m);
    // Each delivery is announced before its 250: a wait it matched would be answered and
    // released by the time the next request is served. Still held: none of them answered it.
    assert.equal((await pushOpen(server)).wait, 1, `a mail that does not match ${query} answered the wait`);
    assert.equal(answered, false);
    await deliver(address, match);
    const res = await waiting;
    assert.equal(res.status, 200, res.text);
    return { res, jwt };
  }

  it('subject: a wait ignores mail whose subject does not contain it and answers the one that does (case-insensitive)', async () => {
    const { res } = await waitWith('subject=WELCOME', [{ subject: 'Newsletter' }, { subject: 'Your receipt' }], { subject: 'Welcome aboard' });
    assert.deepEqual(subjects(res), ['Welcome aboard']);
    assert.equal(res.json.count, 3, 'count is still every live mail of the address');
  });

  it('from: matches the From: address or name', async () => {
    const byAddress = await waitWith('from=alerts%40App.Example', [{ from: 'News <news@app.example>', subject: 'news' }], { from: 'Alerts <alerts@app.example>', subject: 'alert' });
    assert.deepEqual(subjects(byAddress.res), ['alert']);
    const byName = await waitWith('from=acme%20security', [{ from: 'Acme Marketing <m@acme.example>', subject: 'promo' }], { from: '"ACME Security" <s@acme.example>', subject: 'sign-in' });
    assert.deepEqual(subjects(byName.res), ['sign-in']);
  });

  it('to: matches a To: recipient, and all given filters must match', async () => {
    const { res } = await waitWith(
      'to=qa-team&subject=code',
      [
        { to: 'dev-team@example.org', subject: 'your code' },
        { to: 'qa-team@example.org', subject: 'weekly report' },
      ],
      { to: 'Someone <x@example.org>, QA-Team <qa-team@example.org>', subject: 'Your CODE' },
    );
    assert.deepEqual(subjects(res), ['Your CODE']);
  });

  it('a wait with since=0 skips mail already there that does not match, and answers only the matching ones', async () => {
    const { address, jwt } = await createAddress(server);
    await deliver(address, { subject: 'first: code' });
    await deliver(address, { subject: 'other' });
    await deliver(address, { subject: 'second: code' });
    const res = await request(server.httpUrl, '/api/mails/wait?timeout=5&subject=code', { jwt });
    assert.equal(res.status, 200);
    assert.deepEqual(subjects(res), ['second: code', 'first: code']);
    const none = await request(server.httpUrl, '/api/mails/wait?timeout=0&subject=nothing-like-it', { jwt });
    assert.equal(none.status, 204);
  });

  it('the event stream sends only matching mail (live and replayed); other events as always', async () => {
    const { address, jwt } = await createAddress(server);
    await deliver(address, { subject: 'old match' });
    await deliver(address, { subject: 'old other' });
    const stream = await openEventStream(server.httpUrl, '/api/events?since=0&subject=MATCH&from=example.org', { authorization: `Bearer ${jwt}` });
    streams.push(stream);
    assert.equal(stream.status, 200);
    await stream.next('ready');
    assert.equal(JSON.parse(JSON.parse((await stream.next('mail')).data).metadata).subject, 'old match');
    await deliver(address, { subject: 'live other' });
    await deliver(address, { subject: 'live match', from: 'x@elsewhere.test' });
    await deliver(address, { subject: 'Live Match' });
    const live = await stream.next('mail');
    assert.equal(JSON.parse(JSON.parse(live.data).metadata).subject, 'Live Match');
    // Stream events arrive in order: nothing that did not match came before it.
    assert.deepEqual(
      stream.events.filter((e) => e.event === 'mail').map((e) => JSON.parse(JSON.parse(e.data).metadata).subject),
      ['old match', 'Live Match'],
    );
    assert.equal((await request(server.httpUrl, '/api/clear_inbox', { method: 'DELETE', jwt })).status, 200);
    await stream.next('inbox_cleared');
  });

  it(`a filter over 256 characters, or given twice, is a 400 in plain text; 256 is accepted`, async () => {
    const { jwt } = await createAddress(server);
    const long = 'x'.repeat(257);
    for (const key of ['from', 'to', 'subject']) {
      for (const path of ['/api/mails/wait?timeout=0&', '/api/events?']) {
        const res = await request(server.httpUrl, `${path}${key}=${long}`, { jwt });
        assert.equal(res.status, 400, `${path}${key}: ${res.status}`);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
        assert.equal(res.text, `Invalid request: ${key} must be at most 256 characters.`);
      }
      const twice = await request(server.httpUrl, `/api/mails/wait?timeout=0&${key}=a&${key}=b`, { jwt });
      assert.equal(twice.status, 400);
      assert.equal(twice.text, `Invalid request: give ${key} once.`);
    }
    // 256 characters, multi-byte ones too.
    const ok = await request(server.httpUrl, `/api/mails/wait?timeout=0&subject=${encodeURIComponent('ü'.repeat(256))}`, { jwt });
    assert.equal(ok.status, 204);
    const stream = await openEventStream(server.httpUrl, `/api/events?from=${'y'.repeat(256)}`, { authorization: `Bearer ${jwt}` });
    streams.push(stream);
    assert.equal(stream.status, 200);
  });
});
