// The abuse controls over real SMTP (docs/operating.md "Abuse controls"): the rate limit per
// sending domain (451 4.7.1), ABUSE_CONTACT in the policy refusals' texts, and every refusal
// counted by reason, in temp_inbox_smtp_refusals_total and in the hourly counts of GET
// /api/admin/refusals, with its recipient domain. Each control has a message that passes and
// one that is refused. On SQLite here, and on two PostgreSQL nodes sharing Redis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createAddress, DOMAIN, request, SmtpClient, startTestServer, testClock, type TestServer } from '../helpers/harness.js';
import { REFUSAL_FLUSH_MS } from '../../src/mail/refusal-counts.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

const METRICS = 'metrics-token-for-abuse-controls';
const CONTACT = 'abuse@ops.example';

/** temp_inbox_smtp_refusals_total by reason, as /metrics has it now. */
async function metricCounts(server: TestServer): Promise<Record<string, number>> {
  const text = (await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).text;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^temp_inbox_smtp_refusals_total\{reason="(\w+)"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

interface Refusals {
  from: string;
  to: string;
  hours: { hour: string; reason: string; recipientDomain: string | null; count: number }[];
  totals: Record<string, number>;
}

async function refusals(server: TestServer, query = ''): Promise<Refusals> {
  const res = await adminRequest(server, `/api/admin/refusals${query}`);
  assert.equal(res.status, 200, res.text);
  return res.json as Refusals;
}

/** One transaction up to MAIL FROM's reply (then QUIT). */
async function mailFrom(server: TestServer, from: string, localAddress?: string): Promise<{ code: number; text: string }> {
  const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', localAddress);
  try {
    await smtp.command('EHLO client.test');
    return await smtp.command(`MAIL FROM:<${from}>`);
  } finally {
    await smtp.quit();
  }
}

/** A whole message from `from` to `to`: the reply of the step that ended it. */
async function send(server: TestServer, from: string, to: string, message = 'Subject: hi\r\n\r\nhello\r\n'): Promise<{ code: number; text: string }> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.command('EHLO client.test');
    const mail = await smtp.command(`MAIL FROM:<${from}>`);
    if (mail.code !== 250) return mail;
    const rcpt = await smtp.command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return rcpt;
    const data = await smtp.command('DATA');
    assert.equal(data.code, 354, data.text);
    return await smtp.data(message);
  } finally {
    await smtp.quit();
  }
}

function withAttachment(filename: string, content: Buffer): string {
  const b = 'abuse-boundary';
  return [
    'Subject: file',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain',
    '',
    'see attached',
    `--${b}`,
    'Content-Type: application/octet-stream',
    'Content-Transfer-Encoding: base64',
    `Content-Disposition: attachment; filename="${filename}"`,
    '',
    content.toString('base64'),
    `--${b}--`,
    '',
  ].join('\r\n');
}

describe('abuse controls on SQLite: SENDER_DOMAIN_RATE_LIMIT=2/60, ABUSE_CONTACT, refusals counted', () => {
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    server = await startTestServer({
      SENDER_DOMAIN_RATE_LIMIT: '2/60',
      ABUSE_CONTACT: CONTACT,
      ATTACHMENT_MAX_BYTES: '1000',
      MAX_MESSAGE_BYTES: '60000',
      METRICS_TOKEN: METRICS,
      ADMIN_TOKEN,
    });
    inbox = await createAddress(server);
  });
  after(async () => server?.close());

  it('every reason starts at 0 in /metrics and in the totals', async () => {
    const m = await metricCounts(server);
    for (const reason of ['blocked', 'sender_domain_rate', 'attachment_size', 'attachment_type', 'spam_score', 'unknown_recipient', 'retired_domain', 'message_size', 'rate_limit', 'mailbox_full', 'busy']) {
      assert.equal(m[reason], 0, reason);
    }
    const r = await refusals(server);
    assert.deepEqual(Object.values(r.totals), Object.values(r.totals).map(() => 0));
    assert.equal(Object.keys(r.totals).length, 11);
    assert.deepEqual(r.hours, []);
  });

  it('per sending domain: two messages from busy.example pass, the third (any case, any client) gets 451 4.7.1 saying why; other domains and <> pass', async () => {
    assert.equal((await send(server, 'one@busy.example', inbox.address)).code, 250);
    assert.equal((await send(server, 'two@Busy.Example', inbox.address)).code, 250);
    const refused = await mailFrom(server, 'three@BUSY.EXAMPLE', '127.0.0.2');
    assert.equal(refused.code, 451, refused.text);
    assert.match(refused.text, /^451 4\.7\.1 Too much mail from senders at busy\.example for now; try again in \d+ seconds\r\n$/);
    assert.equal((await send(server, 'one@quiet.example', inbox.address)).code, 250);
    assert.equal((await send(server, '', inbox.address)).code, 250, 'the null sender has no domain to count');
    assert.equal((await metricCounts(server))['sender_domain_rate'], 1);
    const r = await refusals(server);
    assert.equal(r.totals['sender_domain_rate'], 1);
    assert.deepEqual(
      r.hours.filter((h) => h.reason === 'sender_domain_rate').map((h) => [h.recipientDomain, h.count]),
      [[null, 1]],
      'refused before any recipient: no recipient domain',
    );
  });

  it("an operator's block: 550 5.7.1 with the abuse contact; counted as blocked", async () => {
    const add = await adminRequest(server, '/api/admin/blocks', { method: 'POST', body: { kind: 'domain', value: 'spam.example' } });
    assert.equal(add.status, 200, add.text);
    const refused = await mailFrom(server, 'x@spam.example');
    assert.equal(refused.text, `550 5.7.1 Mail from this sender's domain is refused here; report abuse to ${CONTACT}\r\n`);
    assert.equal((await mailFrom(server, 'x@fine.example')).code, 250);
    assert.equal((await metricCounts(server))['blocked'], 1);
    assert.equal((await refusals(server)).totals['blocked'], 1);
  });

  it('the attachment policy: a refused extension and a program by its content are 552 5.7.0 with the abuse contact, a size 552 5.3.4 without; each counted with the recipient domain', async () => {
    assert.equal((await send(server, 'a@files1.example', inbox.address, withAttachment('notes.txt', Buffer.from('plain words')))).code, 250);
    const type = await send(server, 'a@files2.example', inbox.address, withAttachment('setup.exe', Buffer.from('plain words')));
    assert.equal(type.code, 552, type.text);
    assert.match(type.text, new RegExp(`^552 5\\.7\\.0 Message refused: attachment "setup\\.exe" is of a type this server does not accept \\(\\.exe\\); report abuse to ${CONTACT}\\r\\n$`));
    // A Windows program by its content, whatever its name (ATTACHMENT_REFUSE_EXECUTABLES, on by default).
    const program = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(62, 0)]);
    const pe = await send(server, 'a@files4.example', inbox.address, withAttachment('invoice.pdf', program));
    assert.equal(pe.text, `552 5.7.0 Message refused: attachment "invoice.pdf" is a Windows program (PE), which this server does not accept; report abuse to ${CONTACT}\r\n`);
    const size = await send(server, 'b@files3.example', inbox.address, withAttachment('big.bin', Buffer.alloc(1001, 1)));
    assert.equal(size.text, '552 5.3.4 Message refused: attachment "big.bin" is 1001 bytes, over this server\'s limit of 1000 bytes per attachment\r\n');
    const m = await metricCounts(server);
    assert.equal(m['attachment_type'], 2);
    assert.equal(m['attachment_size'], 1);
    const rows = (await refusals(server)).hours.filter((h) => h.reason.startsWith('attachment_'));
    assert.deepEqual(rows.map((h) => [h.reason, h.recipientDomain, h.count]).sort(), [
      ['attachment_size', DOMAIN, 1],
      ['attachment_type', DOMAIN, 2],
    ]);
  });

  it('an unknown recipient (550 5.1.1) and a message over MAX_MESSAGE_BYTES (552 5.3.4) are counted with their domains (outside the pool: "(other)")', async () => {
    const unknown = await send(server, 'a@x1.example', `nobody@${DOMAIN}`);
    assert.equal(unknown.code, 550, unknown.text);
    const elsewhere = await send(server, 'a@x2.example', 'nobody@Elsewhere.Example');
    assert.equal(elsewhere.code, 550, elsewhere.text);
    const big = await send(server, 'a@x3.example', inbox.address, `Subject: big\r\n\r\n${'x'.repeat(70_000)}\r\n`);
    assert.equal(big.code, 552, big.text);
    assert.match(big.text, /^552 5\.3\.4 /);
    const m = await metricCounts(server);
    assert.equal(m['unknown_recipient'], 2);
    assert.equal(m['message_size'], 1);
    const r = await refusals(server);
    assert.deepEqual(
      r.hours.filter((h) => h.reason === 'unknown_recipient').map((h) => [h.recipientDomain, h.count]).sort(),
      [
        ['(other)', 1],
        [DOMAIN, 1],
      ],
    );
    assert.deepEqual(r.hours.filter((h) => h.reason === 'message_size').map((h) => [h.recipientDomain, h.count]), [[DOMAIN, 1]]);
  });

  it('the window: from is the start of the oldest hour read, to is now, each row an hour of it', async () => {
    const before = Date.now();
    const r = await refusals(server, '?hours=3');
    const from = Date.parse(r.from);
    const to = Date.parse(r.to);
    assert.ok(to >= before && to <= Date.now(), r.to);
    assert.equal(from % 3_600_000, 0);
    assert.equal(from, Math.floor(to / 3_600_000) * 3_600_000 - 2 * 3_600_000);
    for (const h of r.hours) assert.ok(Date.parse(h.hour) >= from && Date.parse(h.hour) <= to, h.hour);
    assert.ok(r.hours.length > 0);
  });
});

describe('abuse controls on SQLite: the per-client windows and the quota counted', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SMTP_RATE_RECIPIENTS: '1/60', SMTP_RATE_MESSAGES: '2/60', ADDRESS_MAX_MAILS: '1', METRICS_TOKEN: METRICS, ADMIN_TOKEN });
  });
  after(async () => server?.close());

  it('a full mailbox (452 4.2.2), a recipient over SMTP_RATE_RECIPIENTS and a message over SMTP_RATE_MESSAGES (452/421 4.7.0)', async () => {
    const full = await createAddress(server);
    const other = await createAddress(server);
    // The first recipient passes and fills the address (ADDRESS_MAX_MAILS=1).
    assert.equal((await send(server, 'a@x.example', full.address)).code, 250);
    const second = await send(server, 'a@x.example', other.address);
    assert.match(second.text, /^452 4\.7\.0 Too many recipients from your address/, 'the second recipient of the window');
    const client2 = await SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.2');
    try {
      await client2.command('EHLO client.test');
      assert.equal((await client2.command('MAIL FROM:<a@x.example>')).code, 250);
      const quota = await client2.command(`RCPT TO:<${full.address}>`);
      assert.match(quota.text, /^452 4\.2\.2 Mailbox <[^>]+> is full/);
    } finally {
      await client2.quit();
    }
    // SMTP_RATE_MESSAGES=2/60: the client 127.0.0.1 has had two MAIL FROM.
    const limited = await mailFrom(server, 'a@x.example');
    assert.match(limited.text, /^421 4\.7\.0 Too many messages from your address/);
    const m = await metricCounts(server);
    assert.equal(m['mailbox_full'], 1);
    assert.equal(m['rate_limit'], 2);
    const r = await refusals(server);
    assert.equal(r.totals['mailbox_full'], 1);
    assert.equal(r.totals['rate_limit'], 2);
    assert.deepEqual(
      r.hours.filter((h) => h.reason === 'rate_limit').map((h) => [h.recipientDomain, h.count]).sort(),
      [
        [DOMAIN, 1],
        [null, 1],
      ].sort(),
    );
  });
});

describe('a connection over SMTP_MAX_CLIENTS_PER_IP counted as rate_limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SMTP_TRUSTED_NETWORKS: '', SMTP_MAX_CLIENTS_PER_IP: '1', METRICS_TOKEN: METRICS, ADMIN_TOKEN });
  });
  after(async () => server?.close());

  it('the first connection is greeted; the second from the same client gets 421 4.7.0 and is closed', async () => {
    const first = await SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.9');
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let got = '';
        const socket = connect({ port: server.smtpPort, host: '127.0.0.1', localAddress: '127.0.0.9' });
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => (got += d));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
      assert.match(answer, /^421 4\.7\.0 .*Too many connections from your address/);
    } finally {
      await first.quit();
    }
    assert.equal((await metricCounts(server))['rate_limit'], 1);
    assert.deepEqual((await refusals(server)).hours.map((h) => [h.reason, h.recipientDomain, h.count]), [['rate_limit', null, 1]]);
  });
});

describe("a retired pool domain's recipients counted as retired_domain", () => {
  const clock = testClock();
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: 'kept.test,old.test', DOMAIN_RETIRE_GRACE: '1d', METRICS_TOKEN: METRICS, ADMIN_TOKEN }, undefined, undefined, { now: clock.now });
  });
  after(async () => server?.close());

  it('taken during the grace; past it 550 5.1.2, counted with the domain', async () => {
    const inbox = await createAddress(server, { domain: 'old.test' });
    const retire = await adminRequest(server, '/api/admin/domains/old.test', { method: 'PATCH', body: { state: 'retired' } });
    assert.equal(retire.status, 200, retire.text);
    assert.equal((await send(server, 'a@r1.example', inbox.address)).code, 250, 'within the grace');
    clock.advance(86_400_000 + 1000);
    const refused = await send(server, 'a@r2.example', inbox.address);
    assert.match(refused.text, /^550 5\.1\.2 /);
    assert.equal((await metricCounts(server))['retired_domain'], 1);
    const r = await refusals(server);
    assert.deepEqual(r.hours.filter((h) => h.reason === 'retired_domain').map((h) => [h.recipientDomain, h.count]), [['old.test', 1]]);
  });
});

describe('abuse controls on two PostgreSQL nodes sharing Redis', async () => {
  const skip = skipUnless('postgres', 'redis');
  const nodes = twoNodes('abuse', skip, { SENDER_DOMAIN_RATE_LIMIT: '2/60', ABUSE_CONTACT: 'https://ops.example/abuse', METRICS_TOKEN: METRICS, ADMIN_TOKEN });

  it('the sending domain is counted across the nodes; each node counts its refusals, and either reads them all', { skip }, async () => {
    const inbox = await createAddress(nodes.a);
    assert.equal((await send(nodes.a, 'one@shared.example', inbox.address)).code, 250);
    assert.equal((await send(nodes.b, 'two@shared.example', inbox.address)).code, 250);
    const refused = await mailFrom(nodes.a, 'three@shared.example');
    assert.match(refused.text, /^451 4\.7\.1 Too much mail from senders at shared\.example/);
    assert.match((await mailFrom(nodes.b, 'four@shared.example')).text, /^451 4\.7\.1 /);
    assert.equal((await send(nodes.b, 'x@a.example', `nobody@${DOMAIN}`)).code, 550);
    const blocked = await adminRequest(nodes.a, '/api/admin/blocks', { method: 'POST', body: { kind: 'sender', value: 'bad@b.example' } });
    assert.equal(blocked.status, 200, blocked.text);
    assert.equal((await mailFrom(nodes.a, 'bad@b.example')).text, '550 5.7.1 Mail from this sender is refused here; report abuse to https://ops.example/abuse\r\n');
    assert.equal((await metricCounts(nodes.a))['sender_domain_rate'], 1);
    assert.equal((await metricCounts(nodes.b))['sender_domain_rate'], 1);
    // Node b's read writes b's counts; then node a reads both nodes' rows from the database.
    await refusals(nodes.b);
    const r = await refusals(nodes.a);
    assert.equal(r.totals['sender_domain_rate'], 2);
    assert.equal(r.totals['unknown_recipient'], 1);
    assert.equal(r.totals['blocked'], 1);
    assert.deepEqual(r.hours.filter((h) => h.reason === 'sender_domain_rate').map((h) => [h.recipientDomain, h.count]), [[null, 2]]);
    assert.deepEqual((await refusals(nodes.b)).totals, r.totals);
  });

  it("another node's refusals reach a node's read without a read on that node: each node writes its counts every REFUSAL_FLUSH_MS", { skip }, async () => {
    const before = (await refusals(nodes.a)).totals['unknown_recipient']!;
    assert.equal((await send(nodes.b, 'x@c.example', `nobody-else@${DOMAIN}`)).code, 550);
    // Only node a is read from here on: the count comes with b's timed write, not with a read on b.
    const end = Date.now() + 4 * REFUSAL_FLUSH_MS;
    while ((await refusals(nodes.a)).totals['unknown_recipient'] !== before + 1) {
      assert.ok(Date.now() < end, `node b's refusal not written within ${4 * REFUSAL_FLUSH_MS} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});
