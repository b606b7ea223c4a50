// The report summary of a mail (docs/api.md "Deliverability report", docs/decisions.md
// "Deliverability report"): with SPAM_SCANNER each mail's report is built after its 250,
// and its webhook delivery waits for the summary (within a bound) and carries it, as its
// parsed view does; without a scanner the first GET of the report keeps it. The service
// runs whole (real SMTP, HTTP, SQLite, webhook receiver). The scanner is a real spamd
// where a real score is asked for, and a spamd stand-in on loopback (its protocol, its
// answer held until the test lets it go) where the test must hold the scan: a real
// scanner cannot be told to be slow.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createAddress, message, request, sendMail, startTestServer, until, type TestServer } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { scannerMissing, startSpamd, type RunningScanner } from '../helpers/spam-scanners.js';
import { startSpamdStandIn, type SpamdStandIn } from '../helpers/spamd-stand-in.js';


const SUMMARY_KEYS = ['content', 'html', 'links', 'sender', 'spam', 'spam_score', 'spam_threshold', 'verdict'];

async function hooked(s: TestServer, r: Receiver) {
  const { address, jwt } = await createAddress(s, { name: `r-${randomUUID().slice(0, 8)}` });
  const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: r.url() } });
  assert.equal(put.status, 200, put.text);
  r.secret = put.json.secret;
  return { address: address as string, jwt: jwt as string };
}

const html = '<html><body><p style="display:flex">Hi</p><img src="https://cdn.example/x.png"></body></html>';
const mailTo = (s: TestServer, to: string) =>
  sendMail(s.smtpPort, {
    to: [to],
    message: message({ From: 'App <noreply@app.example>', Subject: 'Welcome', 'Message-ID': `<${randomUUID()}@app.example>`, 'Content-Type': 'text/html; charset=utf-8' }, html),
  });

async function parsedOf(s: TestServer, jwt: string, uuid: string) {
  const res = await request(s.httpUrl, `/api/mail/${uuid}/parsed`, { jwt });
  assert.equal(res.status, 200, res.text);
  return res.json;
}

/** The summary a report makes (as the service keeps it), links as listed. */
const summaryOfReport = (r: any) => ({
  verdict: r.verdict,
  spam: r.spam.verdict,
  html: r.html.verdict,
  links: r.links.verdict,
  content: r.content.verdict,
  sender: r.sender.verdict,
  spam_score: r.spam.score,
  spam_threshold: r.spam.threshold,
});

describe('report summary with a scanner: built after the 250, awaited by the webhook', () => {
  let standIn: SpamdStandIn;
  let s: TestServer;
  /** The same with a scan time-out of 2 s. */
  let quick: TestServer;
  let r: Receiver;
  before(async () => {
    standIn = await startSpamdStandIn(1.5);
    r = await startReceiver();
    s = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true', SPAM_SCANNER: `spamd://127.0.0.1:${standIn.port}`, SPAM_SCANNER_TIMEOUT: '20s' });
    quick = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true', SPAM_SCANNER: `spamd://127.0.0.1:${standIn.port}`, SPAM_SCANNER_TIMEOUT: '2s' });
  });
  after(async () => {
    standIn.release();
    await s?.close();
    await quick?.close();
    await r?.stop();
    await standIn?.close();
  });

  it('answers 250 while the scan is held; the webhook waits for the summary and carries it; the parsed view has the same', async () => {
    const { address, jwt } = await hooked(s, r);
    standIn.hold = true;
    const asked = standIn.asked;
    const reply = await mailTo(s, address);
    assert.equal(reply.code, 250);
    // The scan starts after the 250 and is held: the delivery waits for the summary meanwhile.
    await until('the scanner is asked', () => standIn.asked > asked);
    const list = await request(s.httpUrl, '/api/mails?limit=1&offset=0', { jwt });
    assert.equal(list.status, 200, list.text);
    const uuid = list.json.results[0].uuid as string;
    assert.equal((await parsedOf(s, jwt, uuid)).report, undefined, 'no summary before the scan answered');
    assert.equal(r.posts.length, 0, 'the webhook waits for the summary');
    const released = Date.now();
    standIn.release();
    const [post] = await r.untilPosts(1);
    assert.ok(Date.now() >= released);
    assert.equal(post!.verified, true);
    const report = post!.event.data.report;
    assert.deepEqual(Object.keys(report).sort(), SUMMARY_KEYS);
    assert.equal(report.spam, 'pass', 'from 2.5 (half the threshold) it would warn');
    assert.equal(report.spam_score, 1.5);
    assert.equal(report.spam_threshold, 5);
    assert.equal(report.html, 'warn', 'display:flex and an image without alt');
    // The parsed view says the same, and so does the full report (built again when asked).
    assert.deepEqual((await parsedOf(s, jwt, uuid)).report, report);
    standIn.hold = false;
    const full = await request(s.httpUrl, `/api/mail/${uuid}/report`, { jwt });
    assert.equal(full.status, 200, full.text);
    assert.deepEqual(summaryOfReport(full.json), report);
  });

  it('a scan that never answers: the delivery goes once the report is built without it (the scan time-out), its spam unavailable', async () => {
    const { address } = await hooked(quick, r);
    standIn.silent = true;
    const before = r.posts.length;
    const sent = Date.now();
    await mailTo(quick, address);
    const post = (await r.untilPosts(before + 1, 15_000))[before]!;
    const waited = Date.now() - sent;
    standIn.silent = false;
    assert.ok(waited >= 1900, `delivered ${waited} ms after the mail, not before the 2 s scan time-out`);
    assert.equal(post.event.data.report.spam, 'unavailable');
    assert.equal(post.event.data.report.spam_score, null);
  });
});

describe('report summary without a scanner: kept by the first report', () => {
  let s: TestServer;
  let r: Receiver;
  before(async () => {
    r = await startReceiver();
    s = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  });
  after(async () => {
    await s?.close();
    await r?.stop();
  });

  it('the webhook goes at once without one; after GET /report the parsed view has it, as the report says', async () => {
    const { address, jwt } = await hooked(s, r);
    await mailTo(s, address);
    const [post] = await r.untilPosts(1);
    assert.equal('report' in post!.event.data, false);
    const uuid = post!.event.data.uuid as string;
    assert.equal('report' in (await parsedOf(s, jwt, uuid)), false, 'none before the report was asked for');
    const full = await request(s.httpUrl, `/api/mail/${uuid}/report?links=check`, { jwt });
    assert.equal(full.status, 200, full.text);
    const kept = (await parsedOf(s, jwt, uuid)).report;
    // Kept as the report without the link check says it (the links listed, not fetched).
    const rank: Record<string, number> = { pass: 0, unavailable: 0, warn: 1, fail: 2 };
    const listed = { ...summaryOfReport(full.json), links: 'pass' };
    const worst = Math.max(...[listed.spam, listed.html, listed.links, listed.content, listed.sender].map((v) => rank[v]!));
    assert.deepEqual(kept, { ...listed, verdict: ['pass', 'warn', 'fail'][worst] });
    assert.equal(kept.spam, 'unavailable');
    assert.equal(kept.spam_score, null);
  });
});

const spamdSkip = scannerMissing('spamd');
describe('report summary from a real spamd', { skip: spamdSkip, timeout: 300_000 }, () => {
  let scanner: RunningScanner;
  let s: TestServer;
  let r: Receiver;
  before(async () => {
    scanner = await startSpamd();
    r = await startReceiver();
    s = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true', SPAM_SCANNER: scanner.url, SPAM_SCANNER_TIMEOUT: '60s' });
  });
  after(async () => {
    await s?.close();
    await r?.stop();
    await scanner?.close();
  });

  it("the webhook carries spamd's score and threshold, as the report has them", async () => {
    const { address, jwt } = await hooked(s, r);
    await mailTo(s, address);
    const [post] = await r.untilPosts(1, 90_000);
    const report = post!.event.data.report;
    assert.equal(typeof report.spam_score, 'number', JSON.stringify(report));
    assert.equal(report.spam_threshold, 5);
    assert.notEqual(report.spam, 'unavailable');
    const full = await request(s.httpUrl, `/api/mail/${post!.event.data.uuid}/report`, { jwt });
    assert.equal(full.json.spam.threshold, report.spam_threshold);
    assert.deepEqual((await parsedOf(s, jwt, post!.event.data.uuid)).report, report);
  });
});
