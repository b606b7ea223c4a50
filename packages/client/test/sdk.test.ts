// The SDK against the whole service (startTempInbox: real HTTP, real SMTP, SQLite):
// inboxes and their clean-up, the parsed Message, waits (both waits on one mail,
// waitForNext, filters, link preference), exact timeouts, 429 and dropped connections.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { METRICS_TOKEN, untilPushOpen } from '../../server/test/helpers/harness.js';
import { startService } from './helpers/service.js';
import { Inbox, Message, TempInboxClient, TempInboxError, WaitTimeoutError, withInbox } from '../src/index.js';
import { startDropProxy } from './helpers/drop-proxy.js';
import { delay, send, sendMany } from './helpers/mail.js';
import { observedFetch } from './helpers/observed-fetch.js';

/** How late a timeout may reject, at most (the brief: T to T + 250 ms). */
const SLACK_MS = 250;

/** Polls `condition` every 10 ms until it holds; fails with `what` after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !condition(); await delay(10)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting: ${what}`);
  }
}

/** Runs the wait; asserts it rejects with WaitTimeoutError between T and T + 250 ms (plus a plain timer's lateness). Resolves with the elapsed time. */
async function assertTimesOut(wait: () => Promise<unknown>, timeout: number): Promise<number> {
  const started = performance.now();
  // A plain timer of T set at the same moment: how late a loaded machine (other test files
  // beside this one) fires a timer is allowed on top of the slack, and nothing more.
  const reference = new Promise<number>((resolve) => setTimeout(() => resolve(Math.max(0, performance.now() - started - timeout)), timeout));
  let error: unknown;
  try {
    await wait();
  } catch (err) {
    error = err;
  }
  const took = performance.now() - started;
  const late = await reference;
  assert.ok(error instanceof WaitTimeoutError, `expected WaitTimeoutError, got ${String(error)}`);
  assert.equal(error.timeout, timeout);
  assert.ok(took >= timeout, `rejected after ${took.toFixed(1)} ms, before its timeout of ${timeout} ms`);
  assert.ok(
    took <= timeout + SLACK_MS + late,
    `rejected after ${took.toFixed(1)} ms, more than ${SLACK_MS} ms after its timeout of ${timeout} ms (a plain timer of as long fired ${late.toFixed(0)} ms late)`,
  );
  return took;
}

describe('SDK', { timeout: 120_000 }, () => {
  let server: TempInbox;
  let client: TempInboxClient;
  /** Until the service holds one wait open (none else runs in these cases): the mail sent next arrives while it waits. */
  const held = () => untilPushOpen({ httpUrl: server.url }, { wait: 1 });

  before(async () => {
    // METRICS_TOKEN: a case knows a wait is held by the service (its push_open gauge) before it sends the mail.
    server = await startService({ env: { METRICS_TOKEN } });
    client = new TempInboxClient({ baseUrl: server.url });
  });
  after(async () => server?.stop());

  it('creates an inbox with an address and a token, and deletes it', async () => {
    const inbox = await client.createInbox({ name: 'sdk-alice' });
    assert.equal(inbox.address, `sdk-alice@${server.domain}`);
    assert.match(inbox.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const taken = await client.createInbox({ name: 'sdk-alice' });
    assert.notEqual(taken.address, inbox.address, 'a taken name falls back to a random one');
    await assert.rejects(client.createInbox({ name: 'sdk-alice', fallbackToRandom: false }), (err: unknown) => err instanceof TempInboxError && err.status === 409);
    await assert.rejects(client.createInbox({ domain: 'elsewhere.example' }), (err: unknown) => err instanceof TempInboxError && err.status === 400 && /\.$/.test(err.message));
    await inbox.delete();
    await inbox.delete(); // a second delete does nothing
    await assert.rejects(client.openInbox(inbox.token), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    await taken.delete();
  });

  it('await using deletes the inbox when the scope ends, also when it throws', async () => {
    let token = '';
    {
      await using inbox = await client.createInbox();
      token = inbox.token;
      assert.equal((await client.openInbox(token)).address, inbox.address);
    }
    await assert.rejects(client.openInbox(token), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    let thrownToken = '';
    await assert.rejects(async () => {
      await using inbox = await client.createInbox();
      thrownToken = inbox.token;
      throw new Error('the test failed');
    }, /the test failed/);
    await assert.rejects(client.openInbox(thrownToken), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    // An inbox deleted inside the scope is not an error at its end.
    {
      await using inbox = await client.createInbox();
      await inbox.delete();
    }
  });

  it('withInbox gives a fresh inbox, returns what the function returns, and deletes the inbox (also on failure)', async () => {
    let token = '';
    const code = await withInbox(
      async (inbox) => {
        token = inbox.token;
        await send(server, { to: inbox.address, subject: 'Code', text: 'Your code is 551023.' });
        return inbox.waitForCode({ timeout: 5000 });
      },
      { baseUrl: server.url },
    );
    assert.equal(code, '551023');
    await assert.rejects(client.openInbox(token), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    await assert.rejects(
      withInbox(
        (inbox) => {
          token = inbox.token;
          throw new Error('boom');
        },
        { client },
      ),
      /boom/,
    );
    await assert.rejects(client.openInbox(token), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    const previous = process.env['TEMP_INBOX_URL'];
    process.env['TEMP_INBOX_URL'] = server.url;
    try {
      assert.match(await withInbox((inbox) => inbox.address), new RegExp(`@${server.domain}$`), 'the base URL comes from TEMP_INBOX_URL');
    } finally {
      if (previous === undefined) delete process.env['TEMP_INBOX_URL'];
      else process.env['TEMP_INBOX_URL'] = previous;
    }
  });

  it('waitForMail resolves to the parsed Message, with raw() and attachment bytes', async () => {
    await using inbox = await client.createInbox();
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 10, 13]);
    const waiting = inbox.waitForMail({ timeout: 10_000 });
    await held();
    await send(server, {
      from: 'Shop Team <shop@example.com>',
      to: `Alice Example <${inbox.address}>`,
      cc: 'Carol <carol@example.org>',
      replyTo: 'help@example.com',
      subject: 'Your order',
      text: 'Thanks for your order. Your code is 872364.\nhttps://shop.example/orders/1',
      html: '<p>Thanks for your order. Your code is <b>872364</b>.</p><a href="https://shop.example/orders/1">Order</a>',
      attachments: [{ filename: 'receipt.bin', content: bytes, contentType: 'application/octet-stream' }],
      messageId: '<order-1@shop.example>',
    });
    const message = await waiting;
    assert.ok(message instanceof Message, 'a Message');
    assert.equal(message.subject, 'Your order');
    assert.deepEqual(message.from, { name: 'Shop Team', address: 'shop@example.com' });
    assert.deepEqual(message.to, [{ name: 'Alice Example', address: inbox.address }]);
    assert.deepEqual(message.cc, [{ name: 'Carol', address: 'carol@example.org' }]);
    assert.deepEqual(message.reply_to, [{ name: '', address: 'help@example.com' }]);
    assert.equal(message.message_id, '<order-1@shop.example>');
    assert.match(message.text, /Your code is 872364/);
    assert.match(message.html ?? '', /<b>872364<\/b>/);
    assert.deepEqual(message.codes, ['872364']);
    assert.deepEqual(message.links, ['https://shop.example/orders/1']);
    // The verdicts of its arrival: the service's DNS look-ups are refused (helpers/service.ts), so
    // SPF and DMARC cannot be decided (temperror); an unsigned mail has no DKIM entry and no ARC chain.
    assert.ok(message.auth, 'the authentication verdicts are on the message');
    assert.deepEqual({ spf: message.auth.spf, dmarc: message.auth.dmarc, arc: message.auth.arc, dkim: message.auth.dkim }, { spf: 'temperror', dmarc: 'temperror', arc: 'none', dkim: [] });
    assert.equal(message.header('subject'), 'Your order');
    assert.ok(typeof message.id === 'number' && message.id > 0, `id ${message.id}`);
    assert.match(message.created_at, /^\d{4}-\d\d-\d\dT/);
    assert.equal(message.attachments.length, 1);
    const [attachment] = message.attachments;
    assert.equal(attachment!.filename, 'receipt.bin');
    assert.equal(attachment!.size, bytes.length);
    assert.equal(attachment!.inline, false);
    assert.deepEqual(Buffer.from(await attachment!.content()), bytes);
    const raw = await message.raw();
    assert.match(raw, /^Received: /);
    assert.match(raw, /\r\nSubject: Your order\r\n/);
    // JSON gives the fields only.
    const json = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
    for (const key of ['id', 'uuid', 'message_id', 'created_at', 'subject', 'date', 'from', 'to', 'cc', 'reply_to', 'text', 'html', 'headers', 'attachments', 'codes', 'links']) assert.ok(key in json, key);
    assert.deepEqual(Object.keys((json['attachments'] as object[])[0]!).sort(), ['content_id', 'content_type', 'filename', 'id', 'inline', 'size']);
  });

  it('markSeen marks a mail read and unread; the list and a fresh read show it', async () => {
    await using inbox = await client.createInbox();
    await send(server, { to: inbox.address, subject: 'Read me', text: 'Hello.' });
    const message = await inbox.waitForMail({ timeout: 10_000 });
    assert.equal(message.seen, false, 'a new mail is unread, and reading it does not mark it');
    const marked = await inbox.markSeen(message.uuid);
    assert.equal(marked.seen, true);
    assert.equal(marked.uuid, message.uuid);
    assert.equal(marked.metadata.subject, 'Read me', 'as listed, metadata parsed');
    assert.equal((await inbox.list()).mails[0]!.seen, true);
    assert.equal((await inbox.read(message.uuid)).seen, true, 'not the Message read before');
    assert.equal((await inbox.markSeen(message.uuid, false)).seen, false);
    assert.equal((await inbox.list()).mails[0]!.seen, false);
    await assert.rejects(inbox.markSeen('00000000-0000-4000-8000-000000000000'), (err: unknown) => err instanceof TempInboxError && err.status === 404);
  });

  it('waitForCode and then waitForLink both read the same mail; waitForMail twice gives the same mail', async () => {
    await using inbox = await client.createInbox();
    await send(server, {
      to: inbox.address,
      subject: 'Confirm your email',
      text: 'Your code is 402719. Or confirm here: https://app.example/confirm?t=abc',
    });
    assert.equal(await inbox.waitForCode({ timeout: 5000 }), '402719');
    assert.equal(await inbox.waitForLink({ timeout: 5000 }), 'https://app.example/confirm?t=abc');
    const first = await inbox.waitForMail({ timeout: 5000 });
    const again = await inbox.waitForMail({ timeout: 5000 });
    assert.equal(first.id, again.id);
    assert.equal(inbox.lastReturnedId, first.id);
  });

  it('waitForMail considers mail that arrived before the wait; waitForNext only mail newer than any returned', async () => {
    await using inbox = await client.createInbox();
    await sendMany(server, [
      { to: inbox.address, subject: 'one', text: 'first' },
      { to: inbox.address, subject: 'two', text: 'second' },
    ]);
    assert.equal((await inbox.waitForMail({ timeout: 5000 })).subject, 'one', 'the oldest matching mail');
    assert.equal((await inbox.waitForNext({ timeout: 5000 })).subject, 'two');
    await assertTimesOut(() => inbox.waitForNext({ timeout: 700 }), 700);
    assert.equal((await inbox.waitForNext({ subject: 'x', timeout: 10 }).then(() => new Error('resolved'), (e: Error) => e)).message, `No new mail with a subject containing "x" reached ${inbox.address} within 10 ms.`);
    const next = inbox.waitForNext({ timeout: 10_000 });
    await held();
    await send(server, { to: inbox.address, subject: 'three', text: 'third' });
    assert.equal((await next).subject, 'three');
    // waitForMail still starts from the beginning.
    assert.equal((await inbox.waitForMail({ timeout: 5000 })).subject, 'one');
    assert.equal((await inbox.waitForMail({ subject: 'three', timeout: 5000 })).subject, 'three');
  });

  it('openInbox considers only mail that arrives after it opened, unless since says otherwise', async () => {
    const created = await client.createInbox();
    try {
      await send(server, { to: created.address, subject: 'before', text: 'old mail' });
      const opened = await client.openInbox(created.token);
      assert.equal(opened.address, created.address);
      assert.ok(opened.since > 0, 'the newest id at opening');
      await assertTimesOut(() => opened.waitForMail({ timeout: 500 }), 500);
      const all = await client.openInbox(created.token, { since: 0 });
      assert.equal((await all.waitForMail({ timeout: 5000 })).subject, 'before');
      const waiting = opened.waitForMail({ timeout: 10_000 });
      await held();
      await send(server, { to: created.address, subject: 'after', text: 'new mail' });
      assert.equal((await waiting).subject, 'after');
    } finally {
      await created.delete();
    }
  });

  it('filters: from, to and subject are case-insensitive substrings; match runs on the parsed mail', async () => {
    await using inbox = await client.createInbox();
    await sendMany(server, [
      { from: 'Newsletter <news@letters.example>', to: inbox.address, subject: 'Weekly news', text: 'Nothing to see. Code 111111.' },
      { from: 'Billing Dept <billing@shop.example>', to: inbox.address, subject: 'Invoice 7', text: 'Pay now.' },
      { from: 'Security <security@app.example>', to: `Primary Account <${inbox.address}>`, subject: 'Reset your PASSWORD', text: 'Reset code: 907153' },
    ]);
    assert.equal((await inbox.waitForMail({ from: 'BILLING', timeout: 5000 })).subject, 'Invoice 7', 'from: the name');
    assert.equal((await inbox.waitForMail({ from: 'app.example', timeout: 5000 })).subject, 'Reset your PASSWORD', 'from: the address');
    assert.equal((await inbox.waitForMail({ subject: 'password', timeout: 5000 })).subject, 'Reset your PASSWORD');
    assert.equal((await inbox.waitForMail({ to: 'primary account', timeout: 5000 })).subject, 'Reset your PASSWORD', 'to: a recipient name');
    assert.equal(await inbox.waitForCode({ from: 'security', timeout: 5000 }), '907153');
    assert.equal(await inbox.waitForCode({ timeout: 5000 }), '111111', 'without filters: the oldest mail with a code');
    assert.equal((await inbox.waitForMail({ match: (m) => m.text.includes('Pay now'), timeout: 5000 })).subject, 'Invoice 7');
    assert.equal((await inbox.waitForMail({ match: async (m) => m.from.address.endsWith('app.example'), timeout: 5000 })).subject, 'Reset your PASSWORD');
    await assertTimesOut(() => inbox.waitForMail({ from: 'nobody', timeout: 400 }), 400);
    // A filtered wait ignores mail that does not match while it waits.
    const waiting = inbox.waitForMail({ subject: 'welcome', timeout: 10_000 });
    await held();
    await send(server, { to: inbox.address, subject: 'Another invoice', text: 'x' });
    await send(server, { to: inbox.address, subject: 'Welcome aboard', text: 'y' });
    assert.equal((await waiting).subject, 'Welcome aboard');
  });

  it('waitForLink prefers verification, sign-in and reset links over unsubscribe, privacy, social and tracking links', async () => {
    await using inbox = await client.createInbox();
    const html = [
      '<a href="https://www.facebook.com/app">Follow us</a>',
      '<a href="https://app.example/unsubscribe?u=1">Unsubscribe</a>',
      '<a href="https://app.example/privacy">Privacy</a>',
      '<img src="https://track.app.example/open.gif">',
      '<a href="https://app.example/blog/new-features">What is new</a>',
      '<a href="https://click.mailer.example/ls/click?upn=XYZ">Verify your email address</a>',
      '<a href="https://app.example/account/reset-password?token=abc">Reset</a>',
    ].join('\n');
    await send(server, { to: inbox.address, subject: 'Verify your email', html, text: 'See the HTML part.' });
    assert.equal(await inbox.waitForLink({ timeout: 5000 }), 'https://click.mailer.example/ls/click?upn=XYZ', 'the verification link, behind click tracking, by its text');
    assert.equal(await inbox.waitForLink({ contains: 'reset', timeout: 5000 }), 'https://app.example/account/reset-password?token=abc');
    assert.equal(await inbox.waitForLink({ contains: 'UNSUBSCRIBE', timeout: 5000 }), 'https://app.example/unsubscribe?u=1', 'contains names an unwanted link');
    assert.equal(await inbox.waitForLink({ contains: /blog\/new/, timeout: 5000 }), 'https://app.example/blog/new-features');
    // A mail whose only links are unwanted does not count.
    const other = await client.createInbox();
    try {
      await send(server, { to: other.address, subject: 'News', html: '<a href="https://app.example/unsubscribe">Unsubscribe</a> <a href="https://twitter.com/app">Twitter</a>' });
      await assertTimesOut(() => other.waitForLink({ timeout: 600 }), 600);
      await send(server, { to: other.address, subject: 'Sign in', text: 'Sign in: https://app.example/login/magic?k=9 (or unsubscribe: https://app.example/unsubscribe)' });
      assert.equal(await other.waitForLink({ timeout: 5000 }), 'https://app.example/login/magic?k=9');
    } finally {
      await other.delete();
    }
  });

  it('timeouts reject with WaitTimeoutError no earlier than T and no later than T + 250 ms', async () => {
    const inboxes = await Promise.all([0, 1, 2, 3, 4].map(() => client.createInbox()));
    try {
      const timeouts = [0, 150, 999, 1000, 2345];
      await Promise.all(timeouts.map((t, i) => assertTimesOut(() => inboxes[i]!.waitForMail({ timeout: t }), t)));
      // Mail that matches no filter arrives while waiting: still T exactly.
      const waiting = assertTimesOut(() => inboxes[0]!.waitForMail({ match: (m) => m.subject === 'never', timeout: 1500 }), 1500);
      await held();
      await send(server, { to: inboxes[0]!.address, subject: 'not it', text: 'x' });
      await waiting;
      const [message] = [await inboxes[0]!.waitForMail({ timeout: 1000 })];
      assert.equal(message!.subject, 'not it');
      assert.match((await inboxes[1]!.waitForCode({ timeout: 10 }).then(() => new Error('resolved'), (e: Error) => e)).message, /^No mail with a code reached .+ within 10 ms\.$/);
      await assert.rejects(inboxes[1]!.waitForMail({ timeout: -1 }), RangeError);
    } finally {
      await Promise.all(inboxes.map((i) => i.delete()));
    }
  });

  it('long waits are chained polls: a client limited to 1 s polls still times out at T', async () => {
    const observed = observedFetch();
    const polls = () => observed.calls.filter((c) => c.url.includes('/api/mails/wait')).length;
    const chained = new TempInboxClient({ baseUrl: server.url, longPollSeconds: 1, fetch: observed.fetch });
    await using inbox = await chained.createInbox();
    await assertTimesOut(() => inbox.waitForMail({ timeout: 3300 }), 3300);
    const before = polls();
    const waiting = inbox.waitForMail({ timeout: 10_000 });
    // Past two polls: the wait's third poll has been asked (the first two ended without mail).
    await until(() => polls() >= before + 3, 'the third poll of the wait');
    await send(server, { to: inbox.address, subject: 'late', text: 'z' });
    assert.equal((await waiting).subject, 'late');
  });

  it('an abort signal ends a wait with its reason', async () => {
    await using inbox = await client.createInbox();
    const controller = new AbortController();
    const waiting = inbox.waitForMail({ signal: controller.signal, timeout: 10_000 });
    setTimeout(() => controller.abort(new Error('test over')), 200);
    await assert.rejects(waiting, /test over/);
  });

  it('looks past the service\'s newest-100 window when the inbox holds more mail', async () => {
    await using inbox = await client.createInbox();
    await sendMany(
      server,
      Array.from({ length: 105 }, (_, i) => ({ to: inbox.address, subject: `mail ${i + 1}`, text: `number ${i + 1}` })),
    );
    assert.equal((await inbox.waitForMail({ match: (m) => m.subject === 'mail 2', timeout: 10_000 })).subject, 'mail 2');
    assert.equal((await inbox.waitForMail({ timeout: 10_000 })).subject, 'mail 1');
    assert.equal((await inbox.list({ limit: 1 })).count, 105);
  });

  it('a GET whose connection drops is sent once more; a POST is not; a long poll survives a cut', async () => {
    const proxy = await startDropProxy(server.url);
    try {
      const viaProxy = new TempInboxClient({ baseUrl: proxy.url });
      const inbox = await viaProxy.createInbox();
      proxy.dropNext(1);
      assert.equal((await inbox.list()).count, 0, 'retried once');
      proxy.dropNext(2);
      await assert.rejects(inbox.list(), (err: unknown) => err instanceof TempInboxError && err.status === 0 && /Could not reach/.test(err.message));
      proxy.dropNext(1);
      const before = proxy.forwarded;
      await assert.rejects(viaProxy.createInbox(), (err: unknown) => err instanceof TempInboxError && err.status === 0);
      assert.equal(proxy.forwarded, before, 'the POST was not sent again');
      // A long poll cut in the middle is asked again and still sees the mail.
      // Signals, not sleeps: the poll reached the service, then (after the cut) the same wait asked again.
      const polled = proxy.forwarded;
      const waiting = inbox.waitForMail({ timeout: 10_000 });
      await until(() => proxy.forwarded === polled + 1, 'the long poll reached the service');
      proxy.cutAll();
      await until(() => proxy.forwarded === polled + 2, 'the cut poll was asked again');
      await send(server, { to: inbox.address, subject: 'after the cut', text: 'x' });
      assert.equal((await waiting).subject, 'after the cut');
      await inbox.delete();
    } finally {
      await proxy.close();
    }
  });

  it('a wait longer than the service\'s 60 s limit asks for 60 s, and the service holds that poll', async () => {
    // What chaining does past a poll's end is the case above (1 s polls); here the
    // default client's first poll is the longest the service takes, and it is taken.
    const observed = observedFetch();
    const polls = () => observed.calls.filter((c) => c.url.includes('/api/mails/wait'));
    const watched = new TempInboxClient({ baseUrl: server.url, fetch: observed.fetch });
    await using inbox = await watched.createInbox();
    const waiting = inbox.waitForMail({ timeout: 61_500 });
    // Held by the service (its push_open gauge), not merely sent: a poll it answered at once would
    // have been followed by a second.
    await held();
    assert.equal(polls().length, 1, 'one poll, held by the service');
    assert.equal(new URL(polls()[0]!.url).searchParams.get('timeout'), '60');
    assert.equal(polls()[0]!.status, undefined, 'not answered yet');
    await send(server, { to: inbox.address, subject: 'within the minute', text: 'z' });
    assert.equal((await waiting).subject, 'within the minute');
    assert.deepEqual(polls().map((p) => p.status), [200]);
  });
});

describe('SDK under rate limits', { timeout: 60_000 }, () => {
  it('honours Retry-After on 429, and a wait rate-limited past its timeout still rejects at T', async () => {
    // A 3 s window: a refusal re-arms a block of exactly one window (Retry-After: 3), and the
    // steps that must land inside one window have 3 s, not 1 s, on a loaded machine.
    const server = await startService({ env: { RATE_LIMITS: 'on', RATE_LIMIT_MAILS: '1/3', RATE_LIMIT_SETTINGS: '0' } });
    try {
      const observed = observedFetch();
      const client = new TempInboxClient({ baseUrl: server.url, fetch: observed.fetch });
      const inbox: Inbox = await client.createInbox();
      await inbox.list();
      const started = performance.now();
      assert.equal((await inbox.list()).count, 0, 'refused once, then served');
      const took = performance.now() - started;
      const refused = observed.calls.find((c) => c.status === 429);
      assert.ok(refused, 'the second list was refused with 429');
      assert.equal(refused.retryAfter, '3', 'Retry-After is the window');
      const retryAfter = 3000;
      assert.ok(took >= retryAfter - 20 && took < retryAfter + 1500, `waited ${took} ms for a Retry-After of ${retryAfter} ms`);

      // The served retry opened a new window and used it: the wait is refused, sleeps on Retry-After and times out at T.
      const mark = observed.calls.length;
      const err = await inbox.waitForMail({ timeout: 800 }).catch((e: unknown) => e);
      assert.ok(err instanceof WaitTimeoutError, String(err));
      assert.match(err.message, /rate-limiting/);
      assert.deepEqual(observed.calls.slice(mark).map((c) => [c.status, c.retryAfter]), [[429, '3']], 'one poll, refused; not asked again past T');

      // That refusal re-armed the block: a client that does not retry is refused once and gives up.
      const impatientCalls = observedFetch();
      const impatient = new TempInboxClient({ baseUrl: server.url, maxRateLimitRetries: 0, fetch: impatientCalls.fetch });
      const same = await impatient.openInbox(inbox.token, { since: 0 });
      const opened = impatientCalls.calls.length;
      await assert.rejects(same.list(), (e: unknown) => e instanceof TempInboxError && e.status === 429);
      assert.deepEqual(impatientCalls.calls.slice(opened).map((c) => [c.status, c.retryAfter]), [[429, '3']], 'refused once, not retried');
    } finally {
      await server.stop();
    }
  });
});
