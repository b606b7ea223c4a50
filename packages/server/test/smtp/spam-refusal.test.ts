// SPAM_REFUSE_SCORE at DATA (docs/operating.md "Abuse controls"), over real SMTP: with a scanner,
// a message scoring at or over the score is refused whole with 554 5.7.1 saying it was refused
// as spam and its score (and the abuse contact), counted as spam_score; one under it passes; a
// scanner that gives no score in SPAM_SCANNER_TIMEOUT (silent, down) lets the mail through;
// without a scanner the variable does nothing and start-up says so. The score comes from a real
// spamd, and from a stand-in speaking spamd's protocol where the test must choose the score or
// make the scanner silent (a real scanner cannot be told to be either).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createAddress, mailCount, request, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { scannerMissing, startSpamd, type RunningScanner } from '../helpers/spam-scanners.js';
import { startSpamdStandIn, type SpamdStandIn } from '../helpers/spamd-stand-in.js';

const METRICS = 'metrics-token-for-spam-refusal';
const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

const message = (body: string, subject = 'Your order has shipped') =>
  [
    'From: Shop <orders@shop.example>',
    'To: someone@example.org',
    `Subject: ${subject}`,
    'Date: Thu, 03 Dec 2026 06:00:00 +0000',
    `Message-ID: <${Math.random().toString(36).slice(2)}@shop.example>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');

async function send(server: TestServer, to: string, raw: string): Promise<{ code: number; text: string; ms: number }> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<orders@shop.example>', 250],
      [`RCPT TO:<${to}>`, 250],
      ['DATA', 354],
    ]);
    const started = Date.now();
    const r = await smtp.data(raw);
    return { ...r, ms: Date.now() - started };
  } finally {
    await smtp.quit();
  }
}


async function spamRefusals(server: TestServer): Promise<{ metric: number; total: number }> {
  const text = (await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).text;
  const metric = Number(/^temp_inbox_smtp_refusals_total\{reason="spam_score"\} (\d+)$/m.exec(text)?.[1]);
  const total = (await adminRequest(server, '/api/admin/refusals')).json.totals.spam_score as number;
  return { metric, total };
}


const spamdSkip = scannerMissing('spamd');
describe('SPAM_REFUSE_SCORE=5 with a real spamd', { skip: spamdSkip, timeout: 300_000 }, () => {
  let scanner: RunningScanner;
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    scanner = await startSpamd();
    server = await startTestServer({ SPAM_SCANNER: scanner.url, SPAM_SCANNER_TIMEOUT: '60s', SPAM_REFUSE_SCORE: '5', ABUSE_CONTACT: 'https://ops.example/abuse', METRICS_TOKEN: METRICS, ADMIN_TOKEN });
    inbox = await createAddress(server);
  });
  after(async () => {
    await server?.close();
    await scanner?.close();
  });

  it('an ordinary message passes; the GTUBE test message is refused with 554 5.7.1 naming its score, nothing stored, counted as spam_score', async () => {
    const fine = await send(server, inbox.address, message('Your parcel left our warehouse today and should arrive on Monday.'));
    assert.equal(fine.code, 250, fine.text);
    const spam = await send(server, inbox.address, message(GTUBE, 'Test'));
    assert.equal(spam.code, 554, spam.text);
    assert.match(spam.text, /^554 5\.7\.1 Message refused as spam: it scored (\d+(\.\d+)?), and this server refuses mail scoring 5 or more; report abuse to https:\/\/ops\.example\/abuse\r\n$/);
    assert.ok(Number(/scored ([\d.]+)/.exec(spam.text)![1]) >= 5);
    assert.equal(await mailCount(server, inbox.jwt), 1);
    assert.deepEqual(await spamRefusals(server), { metric: 1, total: 1 });
  });
});

describe('SPAM_REFUSE_SCORE with a stand-in scanner: the score chosen, silent, down', () => {
  let standIn: SpamdStandIn;
  let server: TestServer;
  let down: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    standIn = await startSpamdStandIn(1);
    const env = { SPAM_SCANNER_TIMEOUT: '1s', SPAM_REFUSE_SCORE: '7.5', SPAM_SCANNER_MAX_BYTES: '5000', METRICS_TOKEN: METRICS, ADMIN_TOKEN };
    server = await startTestServer({ ...env, SPAM_SCANNER: `spamd://127.0.0.1:${standIn.port}` });
    // A port nothing listens on: the scan fails at once.
    const closed = await startSpamdStandIn(1);
    await closed.close();
    down = await startTestServer({ ...env, SPAM_SCANNER: `spamd://127.0.0.1:${closed.port}` });
    inbox = await createAddress(server);
  });
  after(async () => {
    await server?.close();
    await down?.close();
    await standIn?.close();
  });

  it('under the score passes, scanned once: its report on arrival reuses the scan made before the 250', async () => {
    standIn.score = 7.4;
    const asked = standIn.asked;
    assert.equal((await send(server, inbox.address, message('one'))).code, 250);
    const [mail] = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: inbox.jwt })).json.results;
    // The parsed view carries the report's summary once the report on arrival is kept.
    let report: { spam_score?: number } | undefined;
    for (const end = Date.now() + 10_000; report === undefined; await new Promise((r) => setTimeout(r, 20))) {
      report = (await request(server.httpUrl, `/api/mail/${mail.uuid}/parsed`, { jwt: inbox.jwt })).json.report ?? undefined;
      assert.ok(Date.now() < end, 'the report on arrival was not kept within 10 s');
    }
    assert.equal(report.spam_score, 7.4);
    assert.equal(standIn.asked - asked, 1, 'one scan for the refusal check and the report');
  });

  it('at the score and over it is refused (554 5.7.1, without an abuse contact when none is set)', async () => {
    standIn.score = 7.5;
    const at = await send(server, inbox.address, message('two'));
    assert.equal(at.text, '554 5.7.1 Message refused as spam: it scored 7.5, and this server refuses mail scoring 7.5 or more\r\n');
    standIn.score = 30;
    assert.match((await send(server, inbox.address, message('three'))).text, /^554 5\.7\.1 Message refused as spam: it scored 30,/);
    assert.equal(await mailCount(server, inbox.jwt), 1);
    assert.deepEqual(await spamRefusals(server), { metric: 2, total: 2 });
  });

  it('a scanner silent past SPAM_SCANNER_TIMEOUT: the mail is taken once the time-out passes', async () => {
    standIn.score = 30;
    standIn.silent = true;
    try {
      const r = await send(server, inbox.address, message('four'));
      assert.equal(r.code, 250, r.text);
      assert.ok(r.ms >= 900, `answered after ${r.ms} ms, before the scan's time-out`);
    } finally {
      standIn.silent = false;
    }
    assert.equal(await mailCount(server, inbox.jwt), 2);
  });

  it('a message over SPAM_SCANNER_MAX_BYTES is not scanned, and taken', async () => {
    standIn.score = 30;
    assert.equal((await send(server, inbox.address, message('x'.repeat(6000)))).code, 250);
    assert.equal(await mailCount(server, inbox.jwt), 3);
  });

  it('a scanner that cannot be reached: the mail is taken, nothing counted', async () => {
    const other = await createAddress(down);
    assert.equal((await send(down, other.address, message(GTUBE))).code, 250);
    assert.deepEqual(await spamRefusals(down), { metric: 0, total: 0 });
  });
});

describe('SPAM_REFUSE_SCORE without SPAM_SCANNER', () => {
  it('has no effect, and start-up says so in the log', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l));
        done();
      },
    });
    const server = await startTestServer({ SPAM_REFUSE_SCORE: '1' }, undefined, pino({ level: 'info' }, sink));
    try {
      assert.ok(
        lines.some((l) => l.level === 40 && /SPAM_REFUSE_SCORE has no effect without SPAM_SCANNER/.test(l.msg)),
        JSON.stringify(lines.map((l) => l.msg)),
      );
      const inbox = await createAddress(server);
      assert.equal((await send(server, inbox.address, message(GTUBE))).code, 250);
    } finally {
      await server.close();
    }
  });
});
