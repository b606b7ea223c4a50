// The mail.tm-compatible API (docs/api.md "mail.tm-compatible API") driven by a published
// mail.tm client library, @cemalgnlts/mailjs, unchanged but for its base URLs (the two
// fields its constructor sets to mail.tm's hosts): real SMTP delivery of mails with text,
// HTML and an attachment, then every call a user of the library makes, and its event
// listener on our Mercure stream. SQLite, real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Mailjs from '@cemalgnlts/mailjs';
import { DOMAIN, request, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';

/** The library as its users make it, pointed at this server (the only change). */
function client(server: TestServer): Mailjs {
  const mailjs = new Mailjs();
  const fields = mailjs as unknown as { baseUrl: string; baseMercure: string };
  fields.baseUrl = `${server.httpUrl}/mailtm`;
  fields.baseMercure = `${server.httpUrl}/mailtm/.well-known/mercure`;
  return mailjs;
}

const tokenOf = (mailjs: Mailjs) => (mailjs as unknown as { token: string }).token;

/** What the library's delete calls resolve with (its type declarations leave out the result's fields). */
const result = (r: unknown) => r as { status: boolean; statusCode: number; message: string };

const ATTACHMENT = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a, 0x00, 0xff, 0x10]);

/** A message with a text part, an HTML part and a PDF attachment. */
function richMessage(to: string, subject: string): string {
  return [
    'From: "Shop Team" <shop@example.com>',
    `To: "Alice" <${to}>`,
    'Cc: Carol <carol@example.org>',
    `Subject: ${subject}`,
    'Message-ID: <rich-1@example.com>',
    'Date: Tue, 02 Jan 2024 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your code is 482913.',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your code is <b>482913</b>.</p>',
    '--inner--',
    '--outer',
    'Content-Type: application/pdf; name="receipt.pdf"',
    'Content-Disposition: attachment; filename="receipt.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    ATTACHMENT.toString('base64'),
    '--outer--',
    '',
  ].join('\r\n');
}

/** Delivers messages over one real SMTP session, each acknowledged with 250. */
async function deliver(server: TestServer, to: string, messages: string[]): Promise<void> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.command('EHLO client.test');
    for (const m of messages) {
      await smtp.script([
        ['MAIL FROM:<shop@example.com>', 250],
        [`RCPT TO:<${to}>`, 250],
        ['DATA', 354],
      ]);
      const done = await smtp.data(m);
      assert.equal(done.code, 250, done.text);
    }
  } finally {
    await smtp.quit();
  }
}

describe('mail.tm client library (@cemalgnlts/mailjs) against /mailtm', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: DOMAIN });
  });
  after(async () => {
    await server.close();
  });

  it('domains, register, login, me and getAccount', async () => {
    const mailjs = client(server);
    const domains = await mailjs.getDomains();
    assert.equal(domains.status, true, domains.message);
    assert.equal(domains.data.length, 1);
    assert.deepEqual(Object.keys(domains.data[0]!), ['id', 'domain', 'isActive', 'isPrivate', 'createdAt', 'updatedAt']);
    assert.equal(domains.data[0]!.domain, DOMAIN);
    const domain = await mailjs.getDomain(domains.data[0]!.id);
    assert.equal(domain.status, true);
    assert.equal(domain.data.domain, DOMAIN);

    const address = `lib-alice@${DOMAIN}`;
    const registered = await mailjs.register(address, 'correct horse');
    assert.equal(registered.status, true, registered.message);
    assert.equal(registered.statusCode, 201);
    assert.deepEqual(Object.keys(registered.data), ['id', 'address', 'quota', 'used', 'isDisabled', 'isDeleted', 'createdAt', 'updatedAt']);
    assert.equal(registered.data.address, address);
    assert.match(registered.data.id, /^[0-9a-f]{24}$/);
    assert.match(registered.data.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);

    const again = await mailjs.register(address, 'another one');
    assert.equal(again.status, false, 'a taken address');
    assert.equal(again.statusCode, 422);

    const wrong = await mailjs.login(address, 'wrong horse');
    assert.equal(wrong.status, false);
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.message, 'Invalid credentials.');

    const login = await mailjs.login(address, 'correct horse');
    assert.equal(login.status, true, login.message);
    assert.equal(login.data.id, registered.data.id);
    assert.equal(mailjs.id, registered.data.id);
    assert.equal(mailjs.address, address);

    const me = await mailjs.me();
    assert.equal(me.status, true, me.message);
    assert.deepEqual(me.data, registered.data);
    const byId = await mailjs.getAccount(registered.data.id);
    assert.deepEqual(byId.data, registered.data);

    // A second client of the same account, from the token alone.
    const other = client(server);
    const resumed = await other.loginWithToken(tokenOf(mailjs));
    assert.equal(resumed.status, true, resumed.message);
    assert.equal(other.id, registered.data.id);
    assert.equal(other.address, address);
  });

  it('messages: a mail with text, HTML and an attachment, seen, source, attachment download and delete', async () => {
    const mailjs = client(server);
    const address = `lib-bob@${DOMAIN}`;
    assert.equal((await mailjs.register(address, 'pw-bob')).status, true);
    assert.equal((await mailjs.login(address, 'pw-bob')).status, true);
    assert.deepEqual((await mailjs.getMessages()).data, [], 'no mail yet');

    await deliver(server, address, [richMessage(address, 'Your receipt')]);
    const list = await mailjs.getMessages();
    assert.equal(list.status, true, list.message);
    assert.equal(list.data.length, 1);
    const item = list.data[0]!;
    assert.deepEqual(Object.keys(item), ['id', 'accountId', 'msgid', 'from', 'to', 'subject', 'intro', 'seen', 'isDeleted', 'hasAttachments', 'size', 'downloadUrl', 'createdAt', 'updatedAt']);
    assert.equal(item.accountId, `/accounts/${mailjs.id}`);
    assert.equal(item.msgid, '<rich-1@example.com>');
    assert.deepEqual(item.from, { address: 'shop@example.com', name: 'Shop Team' });
    assert.deepEqual(item.to, [{ address, name: 'Alice' }]);
    assert.equal(item.subject, 'Your receipt');
    assert.match(item.intro, /Your code is 482913/);
    assert.equal(item.seen, false);
    assert.equal(item.isDeleted, false);
    assert.equal(item.hasAttachments, true);
    assert.ok(item.size > ATTACHMENT.length);
    assert.equal(item.downloadUrl, `/messages/${item.id}/download`);

    const read = await mailjs.getMessage(item.id);
    assert.equal(read.status, true, read.message);
    const m = read.data;
    assert.equal(m.text.trim(), 'Your code is 482913.');
    assert.deepEqual(
      m.html.map((h) => h.trim()),
      ['<p>Your code is <b>482913</b>.</p>'],
      'html is an array of the HTML parts',
    );
    assert.deepEqual(m.cc, ['carol@example.org']);
    assert.deepEqual(m.bcc, []);
    assert.equal(m.seen, false, 'reading a message does not mark it seen');
    assert.equal(m.flagged, false);
    assert.equal(m.retention, true);
    assert.ok(Date.parse(m.retentionDate) > Date.parse(m.createdAt));
    assert.equal(m.attachments.length, 1);
    const att = m.attachments[0]!;
    assert.deepEqual(Object.keys(att), ['id', 'filename', 'contentType', 'disposition', 'transferEncoding', 'related', 'size', 'downloadUrl']);
    assert.equal(att.id, 'ATTACH000001');
    assert.equal(att.filename, 'receipt.pdf');
    assert.equal(att.contentType, 'application/pdf');
    assert.equal(att.disposition, 'attachment');
    assert.equal(att.size, ATTACHMENT.length);
    assert.equal(att.downloadUrl, `/messages/${item.id}/attachment/ATTACH000001`);

    // The attachment and the message downloads, as a user of the library fetches a downloadUrl: base URL + path, the account's token.
    const download = await fetch(`${server.httpUrl}/mailtm${att.downloadUrl}`, { headers: { authorization: `Bearer ${tokenOf(mailjs)}` } });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'application/pdf');
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), ATTACHMENT);
    const eml = await fetch(`${server.httpUrl}/mailtm${item.downloadUrl}`, { headers: { authorization: `Bearer ${tokenOf(mailjs)}` } });
    assert.equal(eml.status, 200);
    assert.equal(eml.headers.get('content-type'), 'message/rfc822');
    assert.match(await eml.text(), /^Received: [\s\S]*Subject: Your receipt\r\n/);

    const seen = await mailjs.setMessageSeen(item.id, true);
    assert.equal(seen.status, true, seen.message);
    assert.equal(seen.data.seen, true);
    assert.equal((await mailjs.getMessages()).data[0]!.seen, true, 'the list shows it');
    assert.equal((await mailjs.getMessage(item.id)).data.seen, true);
    // The same flag as our own API's (and the web UI's).
    const ours = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: tokenOf(mailjs) });
    assert.equal(ours.json.results[0].uuid, item.id, 'a message id is the mail uuid');
    assert.equal(ours.json.results[0].seen, true);
    assert.equal((await mailjs.setMessageSeen(item.id, false)).data.seen, false);
    assert.equal((await mailjs.getMessages()).data[0]!.seen, false);

    const src = await mailjs.getSource(item.id);
    assert.equal(src.status, true, src.message);
    assert.deepEqual(Object.keys(src.data), ['id', 'downloadUrl', 'data']);
    assert.equal(src.data.id, item.id);
    assert.match(src.data.data, /^Received: from client\.test/);
    assert.ok(src.data.data.includes(`Subject: Your receipt\r\n`));
    assert.ok(src.data.data.includes(ATTACHMENT.toString('base64')));

    const deleted = result(await mailjs.deleteMessage(item.id));
    assert.equal(deleted.status, true, deleted.message);
    assert.equal(deleted.statusCode, 204);
    assert.deepEqual((await mailjs.getMessages()).data, []);
    const gone = await mailjs.getMessage(item.id);
    assert.equal(gone.status, false);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.message, 'Not Found');
  });

  it('getMessages pages by 30, newest first', async () => {
    const mailjs = client(server);
    const address = `lib-pages@${DOMAIN}`;
    await mailjs.register(address, 'pw-pages');
    await mailjs.login(address, 'pw-pages');
    await deliver(
      server,
      address,
      Array.from({ length: 32 }, (_, i) => `From: a@example.org\r\nTo: ${address}\r\nSubject: mail ${i + 1}\r\n\r\nbody ${i + 1}\r\n`),
    );
    const first = await mailjs.getMessages(1);
    const second = await mailjs.getMessages(2);
    const third = await mailjs.getMessages(3);
    assert.equal(first.data.length, 30);
    assert.deepEqual(
      second.data.map((m) => m.subject),
      ['mail 2', 'mail 1'],
    );
    assert.deepEqual(third.data, []);
    assert.deepEqual(
      first.data.slice(0, 2).map((m) => m.subject),
      ['mail 32', 'mail 31'],
    );
    const bad = await mailjs.getMessages(0);
    assert.equal(bad.statusCode, 400);
  });

  it('events: arrive, seen and delete reach the listener over the Mercure stream', async () => {
    const mailjs = client(server);
    const address = `lib-events@${DOMAIN}`;
    await mailjs.register(address, 'pw-events');
    await mailjs.login(address, 'pw-events');
    type Msg = { id: string; subject?: string; seen?: boolean; isDeleted?: boolean };
    const received: { kind: string; data: Msg }[] = [];
    const waiters: (() => void)[] = [];
    const next = async (kind: string): Promise<Msg> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const i = received.findIndex((r) => r.kind === kind);
        if (i >= 0) return received.splice(i, 1)[0]!.data;
        if (Date.now() > deadline) throw new Error(`no ${kind} event; got ${JSON.stringify(received)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 1000);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    };
    const push = (kind: string) => (data: Msg) => {
      received.push({ kind, data });
      waiters.splice(0).forEach((w) => w());
    };
    const opened = new Promise<void>((resolve) => mailjs.on('open', () => resolve()));
    mailjs.on('arrive', push('arrive') as never);
    mailjs.on('seen', push('seen') as never);
    mailjs.on('delete', push('delete') as never);
    mailjs.on('error', push('error') as never);
    try {
      await opened;
      await deliver(server, address, [`From: a@example.org\r\nTo: ${address}\r\nSubject: live one\r\n\r\nhello\r\n`]);
      const arrived = await next('arrive');
      assert.equal(arrived.subject, 'live one');
      assert.equal(arrived.seen, false);
      assert.equal((await mailjs.setMessageSeen(arrived.id)).status, true);
      const seen = await next('seen');
      assert.equal(seen.id, arrived.id);
      assert.equal(seen.seen, true);
      assert.equal(result(await mailjs.deleteMessage(arrived.id)).status, true);
      const deleted = await next('delete');
      assert.equal(deleted.id, arrived.id);
      assert.equal(deleted.isDeleted, true);
      assert.deepEqual(
        received.filter((r) => r.kind === 'error'),
        [],
      );
    } finally {
      mailjs.off();
    }
  });

  it('deleteMe deletes the account: its token and address are gone, and the name is retired (docs/decisions.md "Deleted address")', async () => {
    const mailjs = client(server);
    const address = `lib-gone@${DOMAIN}`;
    await mailjs.register(address, 'pw-gone');
    await mailjs.login(address, 'pw-gone');
    const token = tokenOf(mailjs);
    const id = mailjs.id;
    const deleted = result(await mailjs.deleteMe());
    assert.equal(deleted.status, true);
    const other = client(server);
    const stale = await other.loginWithToken(token);
    assert.equal(stale.status, false);
    assert.equal(stale.statusCode, 401);
    assert.equal((await other.login(address, 'pw-gone')).statusCode, 401, 'the password went with it');
    const anew = await other.register(address, 'pw-new');
    assert.equal(anew.status, false, 'the name is never given out again');
    assert.equal(anew.statusCode, 422);
    assert.match(JSON.stringify(anew.data), /used before and is retired/);
    assert.ok(id, 'the deleted account had an id');
  });
});
