// Webhooks (docs/api.md "Webhooks", docs/decisions.md "Webhooks") against a real receiving
// server on a loopback address that verifies every signature with the standardwebhooks
// library: a mail received over SMTP is POSTed to its address's webhook; failures on
// purpose (500, a receiver that does not answer, a redirect, a receiver that is away)
// are retried with back-off and delivered once; the service restarted while deliveries
// are pending delivers each once; a dead node's lease is taken over; the operator's
// WEBHOOK_URL; the API's answers, bad input and isolation. Loopback targets need
// WEBHOOK_ALLOW_PRIVATE=true; the guard itself is webhook-ssrf.test.ts's subject.
// Timings are shortened through startServer's `webhooks` option (the back-off, the 5 s
// attempt time-out, the 24 h of retries, the lease), never by waiting them out.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import type { WebhookTuning } from '../../src/webhooks/dispatcher.js';
import { createAddress, message, METRICS_TOKEN, request, sendMail, startTestServer, tmp, type TestServer } from '../helpers/harness.js';
import { startProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const PRIVATE = { WEBHOOK_ALLOW_PRIVATE: 'true' };
/** Retries 50 ms apart, so a test sees several within a second. */
const FAST: Partial<WebhookTuning> = { backoff: () => 50, timeoutHold: () => 50, pollMs: 200 };

const receivers: Receiver[] = [];
const servers: TestServer[] = [];
after(async () => {
  for (const r of receivers) await r.stop();
  for (const s of servers) await s.close();
});

async function receiver(host?: string): Promise<Receiver> {
  const r = await startReceiver(host);
  receivers.push(r);
  return r;
}

async function server(env: Record<string, string> = PRIVATE, tuning: Partial<WebhookTuning> = FAST, dataDir?: string): Promise<TestServer> {
  const s = await startTestServer(env, dataDir, undefined, { webhooks: tuning });
  servers.push(s);
  return s;
}

let shared: Promise<TestServer> | undefined;
/**
 * One server with the default tuning (PRIVATE, FAST) for the cases that need nothing else:
 * each uses addresses and receivers of its own, so none sees another's mail or deliveries.
 */
const sharedServer = (): Promise<TestServer> => (shared ??= server());

/** An address with a webhook at `url`; the receiver verifies with its secret. */
async function hooked(s: TestServer, r: Receiver, name = `h-${randomUUID().slice(0, 8)}`, url = r.url()) {
  const { address, jwt } = await createAddress(s, { name });
  const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url } });
  assert.equal(put.status, 200, put.text);
  r.secret = put.json.secret;
  return { address, jwt, secret: put.json.secret as string };
}

const mailTo = (s: TestServer, address: string, subject = 'hello') => sendMail(s.smtpPort, { to: [address], message: message({ Subject: subject, 'Message-ID': `<${randomUUID()}@test>` }, 'Your code is 482913') });
const deliveries = async (s: { httpUrl: string }, jwt: string) => {
  const res = await request(s.httpUrl, '/api/webhook/deliveries', { jwt });
  assert.equal(res.status, 200, res.text);
  return res.json.results as any[];
};

/** Polls GET /api/webhook/deliveries until `done` holds (what the dispatcher records lands a moment after the receiver answered). */
async function untilDeliveries(s: { httpUrl: string }, jwt: string, done: (list: any[]) => boolean, timeoutMs = 10_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(s, jwt);
    if (done(list)) return list;
    if (Date.now() > deadline) throw new Error(`deliveries after ${timeoutMs} ms: ${JSON.stringify(list, null, 1)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhooks: delivery', () => {
  it('a mail received over SMTP is POSTed to its address webhook at once, signed as Standard Webhooks says, with the list fields of the mail', async () => {
    const s = await sharedServer();
    const r = await receiver();
    const { address, jwt, secret } = await hooked(s, r, 'signed');
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and the base64 of 32 bytes');

    await mailTo(s, address, 'Welcome');
    const answered = performance.now();
    const [post] = await r.untilPosts(1);
    const after250 = performance.now() - answered;
    assert.ok(after250 < 1000, `POSTed ${after250.toFixed(0)} ms after the 250 (woken by the delivery, not a poll)`);

    assert.equal(post!.verified, true, 'standardwebhooks verifies it with the secret PUT returned');
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(post!.body, post!.headers as Record<string, string>), 'another secret does not');
    const list = await request(s.httpUrl, '/api/mails?limit=1&offset=0', { jwt });
    const item = list.json.results[0];
    assert.deepEqual(post!.event, { type: 'mail.received', timestamp: item.created_at, data: item }, 'the mail exactly as GET /api/mails lists it');
    assert.equal(post!.headers['webhook-id'], `msg_${item.uuid}`);
    assert.ok(Math.abs(Number(post!.headers['webhook-timestamp']) - Date.now() / 1000) < 10, 'webhook-timestamp is now, in seconds');
    assert.match(String(post!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(post!.headers['content-type'], 'application/json');
    assert.equal(post!.headers['host'], `127.0.0.1:${r.port}`);
    assert.equal(post!.path, '/hook');

    const attempts = await untilDeliveries(s, jwt, (l) => l.length === 1);
    assert.equal(attempts[0].webhook_id, `msg_${item.uuid}`);
    assert.deepEqual(
      { ...attempts[0], at: undefined, duration_ms: undefined },
      { webhook_id: `msg_${item.uuid}`, mail_uuid: item.uuid, url: r.url(), attempt: 1, at: undefined, outcome: 'delivered', status: 200, duration_ms: undefined, error: null, next_attempt_at: null },
    );
    assert.ok(attempts[0].duration_ms >= 0 && attempts[0].duration_ms < 5000);

    const got = await request(s.httpUrl, '/api/webhook', { jwt });
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.json).sort(), ['created_at', 'url'], 'never the secret');
    assert.equal(got.json.url, r.url());
    assert.doesNotMatch(got.text, /whsec_/);
  });

  it('a message to several addresses is POSTed once to each address webhook, each with its own mail and secret; an address without one gets nothing', async () => {
    const s = await sharedServer();
    const r1 = await receiver();
    const r2 = await receiver();
    const one = await hooked(s, r1, 'multi-one');
    const two = await hooked(s, r2, 'multi-two');
    const none = await createAddress(s, { name: 'multi-none' });
    await sendMail(s.smtpPort, { to: [one.address, two.address, none.address], message: message({ Subject: 'to three' }, 'x') });
    const [p1] = await r1.untilPosts(1);
    const [p2] = await r2.untilPosts(1);
    assert.equal(p1!.event.data.address, one.address);
    assert.equal(p2!.event.data.address, two.address);
    assert.equal(p1!.verified, true);
    assert.equal(p2!.verified, true);
    assert.notEqual(p1!.event.data.uuid, p2!.event.data.uuid);
    await mailTo(s, one.address, 'second');
    await r1.untilPosts(2);
    assert.equal(r2.posts.length, 1, "one's mail never reaches two's webhook");
  });

  it('a PUT that replaces the URL makes a new secret: the next mail goes to the new URL, signed with it; DELETE stops deliveries', async () => {
    const s = await sharedServer();
    const oldReceiver = await receiver();
    const newReceiver = await receiver();
    const { address, jwt, secret: oldSecret } = await hooked(s, oldReceiver, 'rotating');
    const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: newReceiver.url('/v2?token=abc') } });
    assert.equal(put.status, 200, put.text);
    assert.notEqual(put.json.secret, oldSecret, 'rotated');
    assert.equal(put.json.url, newReceiver.url('/v2?token=abc'));
    newReceiver.secret = put.json.secret;
    await mailTo(s, address);
    const [post] = await newReceiver.untilPosts(1);
    assert.equal(post!.path, '/v2?token=abc');
    assert.equal(post!.verified, true);
    assert.throws(() => new Webhook(oldSecret).verify(post!.body, post!.headers as Record<string, string>), 'the old secret no longer signs');
    assert.equal(oldReceiver.posts.length, 0);

    const del = await request(s.httpUrl, '/api/webhook', { method: 'DELETE', jwt });
    assert.deepEqual([del.status, del.json], [200, { success: true }]);
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt })).status, 404);
    assert.equal((await request(s.httpUrl, '/api/webhook', { method: 'DELETE', jwt })).status, 404);
    assert.deepEqual(await deliveries(s, jwt), [], 'its attempts went with it');
    // A mail after the DELETE reaches no receiver: shown by a mail to another hooked address arriving alone.
    const other = await hooked(s, oldReceiver, 'after-delete');
    await mailTo(s, address, 'unhooked');
    await mailTo(s, other.address, 'hooked');
    await oldReceiver.untilPosts(1);
    assert.equal(oldReceiver.posts[0]!.event.data.address, other.address);
    assert.equal(newReceiver.posts.length, 1, 'nothing more after DELETE');
  });

  it('never holds up SMTP: with a receiver that never answers, mail is still answered 250 at once, and one webhook has one attempt in flight at a time', async () => {
    const s = await server(PRIVATE, { ...FAST, timeoutMs: 2000 });
    const r = await receiver();
    r.answer = () => 'hang';
    const { address } = await hooked(s, r, 'slow-receiver');
    const started = performance.now();
    for (let i = 0; i < 5; i++) await mailTo(s, address, `m${i}`);
    const ms = performance.now() - started;
    assert.ok(ms < 2000, `5 mails answered 250 in ${ms.toFixed(0)} ms while the receiver holds its first POST`);
    await r.untilPosts(1);
    assert.equal(r.posts.length, 1, 'the next POST waits for the first (one in flight per webhook)');
  });
});

describe('webhooks: failures on purpose', () => {
  it('500, then 503, then 200: retried with back-off and delivered once; each attempt recorded with its answer', async () => {
    const s = await server(PRIVATE, { ...FAST, backoff: (n) => 100 * n });
    const r = await receiver();
    r.answer = (_p, i) => (i === 0 ? { status: 500, body: 'boom' } : i === 1 ? { status: 503 } : { status: 204 });
    const { address, jwt } = await hooked(s, r, 'flaky');
    await mailTo(s, address);
    const posts = await r.untilPosts(3);
    assert.equal(new Set(posts.map((p) => p.headers['webhook-id'])).size, 1, 'the same webhook-id at every attempt');
    assert.ok(posts.every((p) => p.verified), 'each attempt signed anew');
    assert.equal(new Set(posts.map((p) => p.body)).size, 1, 'the same body at every attempt');
    const list = await untilDeliveries(s, jwt, (l) => l.length === 3);
    assert.deepEqual(
      list.map((d) => [d.attempt, d.outcome, d.status, d.error]),
      [
        [3, 'delivered', 204, null],
        [2, 'failed', 503, 'The receiver answered 503.'],
        [1, 'failed', 500, 'The receiver answered 500.'],
      ],
    );
    const gap = (a: any) => Date.parse(a.next_attempt_at) - Date.parse(a.at);
    assert.ok(gap(list[2]) >= 100 && gap(list[1]) >= 200, `back-off grows: ${gap(list[2])} ms, then ${gap(list[1])} ms`);
    // And never again: the next mail's delivery is the next POST.
    await mailTo(s, address, 'next');
    await r.untilPosts(4);
    assert.notEqual(r.posts[3]!.headers['webhook-id'], posts[0]!.headers['webhook-id']);
  });

  it('a receiver that does not answer within the time-out is a failed attempt, retried', async () => {
    const s = await server(PRIVATE, { ...FAST, timeoutMs: 300 });
    const r = await receiver();
    r.answer = (_p, i) => (i === 0 ? 'hang' : { status: 200 });
    const { address, jwt } = await hooked(s, r, 'timeout');
    await mailTo(s, address);
    await r.untilPosts(2);
    const list = await untilDeliveries(s, jwt, (l) => l.length === 2);
    assert.deepEqual(
      list.map((d) => [d.attempt, d.outcome, d.status, d.error]),
      [
        [2, 'delivered', 200, null],
        [1, 'failed', null, 'No answer within 0.3 s.'],
      ],
    );
    assert.ok(list[1].duration_ms >= 290 && list[1].duration_ms < 2000, `the attempt lasted ${list[1].duration_ms} ms`);
  });

  it('a redirect is not followed: a 302 to another loopback server is a failed attempt, and that server is never asked', async () => {
    const s = await server(PRIVATE, { ...FAST, backoff: () => 60_000 });
    const target = await receiver();
    const r = await receiver();
    r.answer = () => ({ status: 302, headers: { location: target.url('/elsewhere') } });
    const { address, jwt } = await hooked(s, r, 'redirected');
    await mailTo(s, address);
    const [attempt] = await untilDeliveries(s, jwt, (l) => l.length === 1);
    assert.deepEqual([attempt.outcome, attempt.status, attempt.error], ['failed', 302, 'The receiver answered 302, a redirect; redirects are not followed.']);
    assert.equal(target.posts.length, 0, 'the redirect target counts no request');
  });

  it('the answer is read up to 64 KiB and dropped: a 200 with an endless body is delivered, and the connection closed', async () => {
    const s = await server(PRIVATE, { ...FAST, timeoutMs: 3000 });
    const r = await receiver();
    r.answer = () => 'endless';
    const { address, jwt } = await hooked(s, r, 'endless');
    await mailTo(s, address);
    const [attempt] = await untilDeliveries(s, jwt, (l) => l.length === 1);
    assert.deepEqual([attempt.outcome, attempt.status], ['delivered', 200]);
    assert.ok(attempt.duration_ms < 2000, `ended after ${attempt.duration_ms} ms, not at the time-out`);
    // The sender closed the connection: the receiver's writes stop (what it wrote sits in socket buffers at most).
    const written = r.endlessWritten[0]!;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(r.endlessWritten[0], written, 'nothing more is written once the sender has closed');
    assert.ok(written < 16 * 1024 * 1024, `${written} bytes went out before the close`);
  });

  it('a receiver stopped and restarted mid-retry: refused while away, delivered once when back', async () => {
    const s = await server(PRIVATE, { ...FAST, backoff: () => 100 });
    const r = await receiver();
    const { address, jwt } = await hooked(s, r, 'away');
    await r.stop();
    await mailTo(s, address);
    await untilDeliveries(s, jwt, (l) => l.length >= 2);
    await r.restart();
    await r.untilPosts(1);
    const list = await untilDeliveries(s, jwt, (l) => l[0]?.outcome === 'delivered');
    assert.ok(list.slice(1).every((d) => d.outcome === 'failed' && d.status === null && d.error === 'The connection was refused.'), JSON.stringify(list));
    assert.equal(r.posts.length, 1);
    assert.equal(r.posts[0]!.verified, true);
    await mailTo(s, address, 'next');
    await r.untilPosts(2);
    assert.notEqual(r.posts[1]!.headers['webhook-id'], r.posts[0]!.headers['webhook-id'], 'the first mail was POSTed once');
  });

  it('gives up once retries would go past the retry period after the mail arrived (24 h; shortened here), recorded as gave_up', async () => {
    // Decided by the attempt's number, not by the clock: after attempts 1 and 2 the next is 100 ms
    // later (well inside a 60 s period); after attempt 3 it would be an hour later, past the period.
    const retryForMs = 60_000;
    const s = await server(PRIVATE, { ...FAST, backoff: (n) => (n < 3 ? 100 : 3_600_000), retryForMs });
    const r = await receiver();
    r.answer = () => ({ status: 500 });
    const { address, jwt } = await hooked(s, r, 'gives-up');
    await mailTo(s, address);
    const list = await untilDeliveries(s, jwt, (l) => l[0]?.outcome === 'gave_up');
    const arrived = Date.parse(r.posts[0]!.event.data.created_at);
    assert.deepEqual(list.map((d) => [d.outcome, d.status]), [['gave_up', 500], ['failed', 500], ['failed', 500]], 'three attempts, the third given up');
    const [last, ...earlier] = list;
    assert.equal(last.next_attempt_at, null);
    for (const d of earlier) {
      const next = Date.parse(d.next_attempt_at);
      assert.ok(next >= Date.parse(d.at) + 100 && next <= arrived + retryForMs, `retried while within the period: ${JSON.stringify(d)}`);
    }
    const posts = r.posts.length;
    // Nothing more: the next mail's first attempt is the next POST.
    r.answer = () => ({ status: 200 });
    await mailTo(s, address, 'next');
    await r.untilPosts(posts + 1);
    await untilDeliveries(s, jwt, (l) => l[0]?.outcome === 'delivered');
    assert.equal(r.posts.length, posts + 1);
  });
});

describe('webhooks: durability', () => {
  it('the service restarted (same SQLite file) while deliveries are pending: each is delivered exactly once after the restart', async () => {
    const dir = tmp('temp-inbox-webhook-restart-');
    try {
      const r = await receiver();
      r.answer = () => ({ status: 500 });
      const first = await startTestServer(PRIVATE, dir, undefined, { webhooks: { ...FAST, backoff: () => 300 } });
      let jwt: string;
      try {
        const hook = await hooked(first, r, 'restarted');
        jwt = hook.jwt;
        for (let i = 0; i < 3; i++) await mailTo(first, hook.address, `pending ${i}`);
        await untilDeliveries(first, jwt, (l) => new Set(l.map((d) => d.mail_uuid)).size === 3);
      } finally {
        await first.close();
      }
      const failedBefore = r.posts.length;
      r.answer = () => ({ status: 200 });
      const second = await startTestServer(PRIVATE, dir, undefined, { webhooks: { ...FAST, backoff: () => 300 } });
      try {
        await r.untilPosts(failedBefore + 3);
        const list = await untilDeliveries(second, jwt, (l) => l.filter((d) => d.outcome === 'delivered').length === 3);
        const delivered = r.posts.slice(failedBefore);
        assert.equal(new Set(delivered.map((p) => p.headers['webhook-id'])).size, 3, 'three mails, once each');
        assert.ok(delivered.every((p) => p.verified), 'signed with the secret kept in the database');
        assert.ok(list.filter((d) => d.outcome === 'delivered').every((d) => d.attempt >= 2), 'counting on from the attempts before the restart');
        // Nothing sent twice: a new mail's POST comes next.
        const { address } = (await request(second.httpUrl, '/api/settings', { jwt })).json;
        await mailTo(second, address, 'after restart');
        await r.untilPosts(failedBefore + 4);
        assert.equal(new Set(r.posts.slice(failedBefore).map((p) => p.headers['webhook-id'])).size, 4);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the service process killed (SIGKILL) while a retry is pending: started again on the same data, it sends the delivery once, at its time', async () => {
    const dir = tmp('temp-inbox-webhook-kill-');
    const r = await receiver();
    r.answer = () => ({ status: 500 });
    const env = { DATA_DIR: dir, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMITS: 'off' };
    let proc = await startProcess(env);
    try {
      const { address, jwt } = await createAddress(proc);
      const put = await request(proc.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: r.url() } });
      r.secret = put.json.secret;
      await sendMail(proc.smtpPort, { to: [address], message: message({ Subject: 'killed' }, 'x') });
      await r.untilPosts(1);
      const [failed] = await untilDeliveries(proc, jwt, (l) => l.length === 1);
      assert.equal(failed.outcome, 'failed');
      proc.child.kill('SIGKILL');
      await proc.exited;
      r.answer = () => ({ status: 200 });
      proc = await startProcess(env);
      // The default back-off: the retry is due 2.5 to 5 s after the failed attempt.
      const posts = await r.untilPosts(2, 15_000);
      assert.equal(posts[1]!.headers['webhook-id'], posts[0]!.headers['webhook-id']);
      assert.equal(posts[1]!.verified, true);
      const due = Date.parse(failed.next_attempt_at);
      const list = await untilDeliveries(proc, jwt, (l) => l.length === 2);
      assert.deepEqual([list[0].attempt, list[0].outcome], [2, 'delivered']);
      assert.ok(Date.parse(list[0].at) >= due - 5, 'not before it was due');
      await sendMail(proc.smtpPort, { to: [address], message: message({ Subject: 'next' }, 'x') });
      await r.untilPosts(3);
      assert.notEqual(r.posts[2]!.headers['webhook-id'], posts[0]!.headers['webhook-id'], 'sent once');
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a delivery leased by a node that died is sent once its lease has run out, exactly once', async () => {
    // No polling during the test (60 s): this node sleeps until something wakes it.
    const s = await server(PRIVATE, { ...FAST, pollMs: 60_000 });
    const r = await receiver();
    const { address, jwt } = await hooked(s, r, 'orphan');
    const record = (await s.store.findAddress(address))!;
    const uuid = randomUUID();
    const now = Date.now();
    // Stored as a delivery stores it (queued in the same transaction), then claimed by a node that dies with it.
    await s.store.insertMails([
      { uuid, addressId: record.id, address, source: 'a@b.example', messageId: '<orphan@test>', metadata: JSON.stringify({ subject: 'orphan', attachments: [] }), trace: Buffer.alloc(0), body: { raw: Buffer.from('Subject: orphan\r\n\r\nx\r\n'), attachments: [] }, createdAt: now },
    ]);
    const taken = await s.store.claimDeliveries({ owner: 'dead-node', now, leaseMs: 700, limit: 10, busyWebhooks: [], operator: false });
    assert.deepEqual(
      taken.map((d) => d.mail.uuid),
      [uuid],
    );
    // Any delivery wakes this node's dispatcher; it then sleeps until the lease runs out.
    const bystander = await createAddress(s, { name: 'bystander' });
    await mailTo(s, bystander.address, 'wake up');
    const [post] = await r.untilPosts(1);
    const waited = Date.now() - now;
    assert.ok(waited >= 690, `taken over after ${waited} ms, once the 700 ms lease had run out`);
    assert.equal(post!.headers['webhook-id'], `msg_${uuid}`);
    assert.equal(post!.verified, true);
    const [done] = await untilDeliveries(s, jwt, (l) => l.length === 1);
    assert.deepEqual([done.attempt, done.outcome], [2, 'delivered'], "the dead node's attempt counts: it was counted when claimed");
    await mailTo(s, address, 'next');
    await r.untilPosts(2);
    assert.notEqual(r.posts[1]!.headers['webhook-id'], `msg_${uuid}`, 'sent once');
  });
});

describe("webhooks: the operator's WEBHOOK_URL", () => {
  it('every mail of every address is POSTed to WEBHOOK_URL, signed with WEBHOOK_SECRET, beside the address own webhook', async () => {
    const operatorReceiver = await receiver();
    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    operatorReceiver.secret = secret;
    const s = await server({ ...PRIVATE, WEBHOOK_URL: operatorReceiver.url('/all'), WEBHOOK_SECRET: secret, METRICS_TOKEN });
    const own = await receiver();
    const a = await hooked(s, own, 'op-a');
    const b = await createAddress(s, { name: 'op-b' });
    await mailTo(s, a.address, 'to a');
    await mailTo(s, b.address, 'to b');
    const posts = await operatorReceiver.untilPosts(2);
    assert.deepEqual(posts.map((p) => p.event.data.address).sort(), [a.address, b.address].sort());
    assert.ok(posts.every((p) => p.verified && p.path === '/all'));
    await own.untilPosts(1);
    assert.equal(own.posts[0]!.event.data.address, a.address);
    assert.equal(own.posts[0]!.verified, true);
    // The owner sees their own webhook's attempts, never the operator's.
    const list = await untilDeliveries(s, a.jwt, (l) => l.length === 1);
    assert.equal(list[0].url, own.url());
    const metrics = await request(s.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const counted = async (hook: string, outcome: string, want: number) => {
      const deadline = Date.now() + 5000;
      let text = metrics.text;
      for (;;) {
        const n = Number(new RegExp(`^temp_inbox_webhook_attempts_total\\{hook="${hook}",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
        if (n === want || Date.now() > deadline) return assert.equal(n, want, `${hook} ${outcome}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        text = (await request(s.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      }
    };
    await counted('operator', 'delivered', 2);
    await counted('address', 'delivered', 1);
    await counted('address', 'failed', 0);
  });
});

describe('webhooks: the API', () => {
  it('answers 401 without valid credentials, on every route', async () => {
    const s = await sharedServer();
    for (const [method, path] of [
      ['PUT', '/api/webhook'],
      ['GET', '/api/webhook'],
      ['DELETE', '/api/webhook'],
      ['GET', '/api/webhook/deliveries'],
    ] as const) {
      const body = method === 'PUT' ? { url: 'http://127.0.0.1:9/x' } : undefined;
      const none = await request(s.httpUrl, path, { method, body });
      assert.equal(none.status, 401, `${method} ${path} without a token`);
      assert.match(none.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal((await request(s.httpUrl, path, { method, body, jwt: 'a.b.c' })).status, 401, `${method} ${path} with a forged token`);
    }
  });

  it('isolation: one address can neither see, change nor delete another address webhook or its deliveries', async () => {
    const s = await sharedServer();
    const r = await receiver();
    const a = await hooked(s, r, 'iso-a');
    const b = await createAddress(s, { name: 'iso-b' });
    await mailTo(s, a.address);
    await untilDeliveries(s, a.jwt, (l) => l.length === 1);
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt: b.jwt })).status, 404, "b does not see a's");
    assert.deepEqual(await deliveries(s, b.jwt), [], "nor its deliveries");
    assert.equal((await request(s.httpUrl, '/api/webhook', { method: 'DELETE', jwt: b.jwt })).status, 404, 'b has nothing to delete');
    const other = await receiver();
    const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt: b.jwt, body: { url: other.url() } });
    assert.equal(put.status, 200);
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt: a.jwt })).json.url, r.url(), "b's PUT sets b's own, a's is unchanged");
    assert.equal((await deliveries(s, a.jwt)).length, 1);
    await request(s.httpUrl, '/api/webhook', { method: 'DELETE', jwt: b.jwt });
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt: a.jwt })).status, 200, "b's DELETE leaves a's");
    // Deleting the address takes its webhook: a's token is 401 from then on.
    assert.equal((await request(s.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: a.jwt })).status, 200);
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt: a.jwt })).status, 401);
  });

  it('bad input is a plain-text 400 that says what is wrong, and sets nothing', async () => {
    const s = await sharedServer();
    const r = await receiver();
    const { jwt } = await hooked(s, r, 'bad-input');
    const long = `http://127.0.0.1:${r.port}/${'a'.repeat(2048)}`;
    const cases: [string, unknown, RegExp][] = [
      ['no url', {}, /url/],
      ['url not a string', { url: 42 }, /url/],
      ['an extra field (a secret of ones own)', { url: r.url(), secret: 'whsec_x' }, /additional properties/],
      ['not an object', '"http://example.com/"', /object/],
      ['empty', { url: '' }, /url/],
      ['too long', { url: long }, /2048/],
      ['relative', { url: '/hook' }, /not a valid absolute URL/],
      ['not a URL', { url: 'hook me' }, /spaces/],
      ['ftp', { url: 'ftp://example.com/x' }, /http:\/\/ or https:\/\//],
      ['javascript', { url: 'javascript:alert(1)' }, /http:\/\/ or https:\/\//],
      ['file', { url: 'file:///etc/passwd' }, /http:\/\/ or https:\/\//],
      ['user and password', { url: 'http://user:pass@example.com/' }, /user name or password/],
      ['user only', { url: 'https://user@example.com/' }, /user name or password/],
      ['a fragment', { url: 'https://example.com/#x' }, /fragment/],
      ['a line break', { url: 'https://exam\nple.com/' }, /control characters/],
      ['port 25', { url: 'http://example.com:25/' }, /port 25/],
      ['port 6667', { url: 'http://example.com:6667/' }, /port 6667/],
      ['a port out of range', { url: 'http://example.com:70000/' }, /not a valid absolute URL/],
    ];
    for (const [what, body, why] of cases) {
      const res = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body });
      assert.equal(res.status, 400, `${what}: ${res.status} ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, what);
      assert.match(res.text, why, what);
    }
    const noJson = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: 'url=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(noJson.status, 415, noJson.text);
    // Plain text too, even when it holds JSON: this route takes JSON only.
    const text = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: '{"url":"https://1.1.1.1/"}', headers: { 'content-type': 'text/plain' } });
    assert.deepEqual([text.status, text.text], [415, 'The body must be JSON (Content-Type: application/json).']);
    const broken = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: '{"url":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400, broken.text);
    for (const limit of ['0', '101', 'x', '1.5', '-1']) {
      const res = await request(s.httpUrl, `/api/webhook/deliveries?limit=${limit}`, { jwt });
      assert.equal(res.status, 400, `limit=${limit}: ${res.text}`);
    }
    assert.equal((await request(s.httpUrl, '/api/webhook/deliveries?limit=100', { jwt })).status, 200);
    assert.equal((await request(s.httpUrl, '/api/webhook', { jwt })).json.url, r.url(), 'the webhook is as it was');
  });
});
