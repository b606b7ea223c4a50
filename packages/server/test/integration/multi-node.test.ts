// Several nodes on one PostgreSQL database and one Redis (docs/decisions.md "Parts"):
// whatever one node stores or decides, every other node sees at once.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CookieJar, createAddress, message, METRICS_TOKEN, request, sendMail, SmtpClient, untilPushOpen, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';
import { openEventStream } from '../helpers/event-stream.js';

// Without PostgreSQL or Redis the cases are registered as skipped, with the reason.
const skip = skipUnless('postgres', 'redis');

describe('two nodes on PostgreSQL + Redis', () => {
  const nodes = twoNodes('mn', skip, { METRICS_TOKEN });
  let a: TestServer;
  let b: TestServer;
  before(() => {
    if (skip) return;
    ({ a, b } = nodes);
  });

  it('reports PostgreSQL as its store and is healthy', { skip }, async () => {
    assert.equal(a.store.kind, 'postgres');
    const res = await request(b.httpUrl, '/health_check');
    assert.deepEqual(res.json, { status: 'ok', version: '1.0.0', storage: 'ok' });
  });

  it('lists on one node the mail another node received', { skip }, async () => {
    const { address, jwt } = await createAddress(a, { name: 'multi' });
    await sendMail(b.smtpPort, { to: [address], message: message({ Subject: 'via node b', 'Message-ID': '<mn-1@test>' }, 'code 551234') });
    const list = await request(a.httpUrl, '/api/mails?limit=10&offset=0', { jwt });
    assert.equal(list.status, 200);
    assert.equal(list.json.count, 1);
    const uuid = list.json.results[0].uuid as string;
    const full = await request(b.httpUrl, `/api/mail/${uuid}`, { jwt });
    assert.equal(full.status, 200);
    assert.match(full.json.raw, /Subject: via node b/);
    assert.equal(JSON.parse(full.json.metadata).codes[0], '551234');
  });

  // A node that has just answered a list (twice, so an answer could be reused) answers the next
  // list after another node's write with that write: a delivery, the read flag, a deletion, a clear.
  it("a write on node B is in node A's next list, after A answered the same list", { skip }, async () => {
    const { address, jwt } = await createAddress(a, { name: 'fresh-lists' });
    const listOnA = async () => {
      const first = await request(a.httpUrl, '/api/mails?limit=20&offset=0', { jwt });
      const again = await request(a.httpUrl, '/api/mails?limit=20&offset=0', { jwt });
      assert.equal(first.status, 200);
      assert.equal(again.text, first.text, 'unchanged between two reads on A');
      return first.json as { count: number; results: { uuid: string; seen: boolean }[] };
    };
    const send = (n: number) => sendMail(b.smtpPort, { to: [address], message: message({ Subject: `fresh ${n}`, 'Message-ID': `<mn-fresh-${n}@test>` }, 'hi') });
    assert.equal((await listOnA()).count, 0);
    await send(1);
    assert.equal((await listOnA()).count, 1, 'delivered through B');
    await send(2);
    const two = await listOnA();
    assert.equal(two.count, 2, 'the second delivery through B');
    const [newest, oldest] = two.results as [{ uuid: string; seen: boolean }, { uuid: string; seen: boolean }];
    assert.equal((await request(b.httpUrl, `/api/mail/${newest.uuid}`, { method: 'PATCH', body: { seen: true }, jwt })).status, 200);
    assert.deepEqual(
      (await listOnA()).results.map((m) => m.seen),
      [true, false],
      'marked read through B',
    );
    assert.equal((await request(b.httpUrl, `/api/mails/${oldest.uuid}`, { method: 'DELETE', jwt })).status, 200);
    assert.deepEqual(
      (await listOnA()).results.map((m) => m.uuid),
      [newest.uuid],
      'deleted through B',
    );
    assert.equal((await request(b.httpUrl, '/api/clear_inbox', { method: 'DELETE', jwt })).status, 200);
    assert.equal((await listOnA()).count, 0, 'cleared through B');
  });

  it('refuses a name taken on another node (409)', { skip }, async () => {
    await createAddress(a, { name: 'taken-mn' });
    const res = await request(b.httpUrl, '/api/new_address', { body: { name: 'taken-mn' } });
    assert.equal(res.status, 409);
  });

  it('shares browser sessions: a switch on one node retires the old id on the other', { skip }, async () => {
    const jar = new CookieJar();
    const first = await createAddress(a, {}, jar);
    await createAddress(b, {}, jar);
    const listing = await request(b.httpUrl, '/api/session/addresses', { jar });
    assert.equal(listing.json.addresses.length, 2);
    const oldSession = jar.cookies.get('session_id')!;
    const sw = await request(b.httpUrl, '/api/switch_address', { body: { address: first.address }, jar });
    assert.equal(sw.status, 200);
    const stale = await request(a.httpUrl, '/api/session/addresses', { headers: { cookie: `session_id=${oldSession}` } });
    assert.equal(stale.status, 401);
    const fresh = await request(a.httpUrl, '/api/session/addresses', { jar });
    assert.equal(fresh.json.activeAddress, first.address);
  });

  it('deleting on one node revokes the JWT and the SMTP mailbox on the other', { skip }, async () => {
    const { address, jwt } = await createAddress(a, { name: 'gone-mn' });
    assert.equal((await request(b.httpUrl, '/api/delete_address', { method: 'DELETE', jwt })).status, 200);
    assert.equal((await request(a.httpUrl, '/api/settings', { jwt })).status, 401);
    const smtp = await SmtpClient.connect(a.smtpPort);
    try {
      await smtp.command('EHLO mn.test');
      await smtp.command('MAIL FROM:<x@example.com>');
      const rcpt = await smtp.command(`RCPT TO:<${address}>`);
      assert.equal(rcpt.code, 550);
      assert.match(rcpt.text, /5\.1\.1/);
    } finally {
      await smtp.quit();
    }
  });
  it('pushes to a stream on one node the mail another node received, and wakes a wait there', { skip }, async () => {
    const { address, jwt } = await createAddress(a);
    const stream = await openEventStream(a.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    try {
      await stream.next('ready');
      const waiting = request(a.httpUrl, '/api/mails/wait?timeout=10', { jwt });
      // The wait is held on node a (its push_open gauge) before the mail arrives on node b.
      await untilPushOpen(a, { events: 1, wait: 1 });
      await sendMail(b.smtpPort, { to: [address], message: message({ Subject: 'across nodes' }, 'code 771122') });
      const event = JSON.parse((await stream.next('mail')).data);
      assert.equal(JSON.parse(event.metadata).subject, 'across nodes');
      const woke = await waiting;
      assert.equal(woke.status, 200);
      assert.equal(woke.json.results[0].uuid, event.uuid);
      // Deletions made on the other node reach the stream too, once each.
      assert.equal((await request(b.httpUrl, `/api/mails/${event.uuid}`, { method: 'DELETE', jwt })).status, 200);
      assert.deepEqual(JSON.parse((await stream.next('mail_deleted')).data), { uuid: event.uuid });
      assert.equal((await request(b.httpUrl, '/api/delete_address', { method: 'DELETE', jwt })).status, 200);
      await stream.next('address_deleted');
      await stream.ended;
      assert.equal(stream.events.filter((e) => e.event === 'mail').length, 1);
    } finally {
      stream.close();
    }
  });

  it('a node hears its own events once, not again from Redis', { skip }, async () => {
    const { address, jwt } = await createAddress(b);
    const stream = await openEventStream(b.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    try {
      await stream.next('ready');
      await sendMail(b.smtpPort, { to: [address], message: message({ Subject: 'same node' }, 'hello') });
      const first = JSON.parse((await stream.next('mail')).data).uuid as string;
      // A second mail, received by node a after the first's event, reaches b through Redis,
      // after any echo of the first would (one channel, delivered in the order published):
      // once it is here, the first was not heard again.
      await sendMail(a.smtpPort, { to: [address], message: message({ Subject: 'from the other node' }, 'hello') });
      const second = JSON.parse((await stream.next('mail')).data).uuid as string;
      assert.notEqual(second, first, 'the next mail event is the second mail, not the first again');
      assert.equal(stream.events.filter((e) => e.event === 'mail').length, 2);
    } finally {
      stream.close();
    }
  });
});
