// GET /api/mail/{uuid}/report over real SMTP and HTTP (docs/api.md "Deliverability
// report"): the sender rules of Gmail and Yahoo against real DNS answers (a DNS server of
// the test's, as the verdict tests use) and real DKIM signatures; the content checks; the
// HTML support from the caniemail data; hostile HTML within a bound; isolation and limits.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import type { MailReport, ReportFinding } from '@temp-inbox/api';
import { startTestDns, type TestDns } from '../helpers/dns-server.js';
import { createAddress, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const DKIM_RECORD = `v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

function fillZone(dns: TestDns): void {
  const domain = (name: string, opts: { spf?: string; dmarc?: string; key?: boolean }) => {
    if (opts.spf) dns.zone.set(name, { TXT: [opts.spf] });
    if (opts.key !== false) dns.zone.set(`sel._domainkey.${name}`, { TXT: [DKIM_RECORD] });
    if (opts.dmarc) dns.zone.set(`_dmarc.${name}`, { TXT: [opts.dmarc] });
  };
  domain('good.test', { spf: 'v=spf1 ip4:127.0.0.1 -all', dmarc: 'v=DMARC1; p=none' });
  domain('spffail.test', { spf: 'v=spf1 ip4:192.0.2.1 -all', dmarc: 'v=DMARC1; p=none' });
  domain('nodmarc.test', { spf: 'v=spf1 ip4:127.0.0.1 -all' });
  domain('other.test', { dmarc: 'v=DMARC1; p=reject' });
}

const crlf = (lines: string[]) => lines.join('\r\n');
const BOUNDARY = 'b-report-test';

interface MailOpts {
  from: string;
  to: string;
  headers?: string[];
  /** Replaces the standard Date/Message-ID lines. */
  omit?: ('date' | 'message-id')[];
  html?: string;
  text?: string | null;
}

function build(o: MailOpts): Buffer {
  const std = [
    `From: Sender <${o.from}>`,
    `To: ${o.to}`,
    'Subject: Your receipt',
    ...(o.omit?.includes('date') ? [] : ['Date: Tue, 01 Dec 2026 10:00:00 +0000']),
    ...(o.omit?.includes('message-id') ? [] : [`Message-ID: <${Math.random().toString(36).slice(2)}@${o.from.split('@')[1]}>`]),
    'MIME-Version: 1.0',
    ...(o.headers ?? []),
  ];
  const text = o.text === undefined ? 'Thanks for your order.' : o.text;
  if (o.html === undefined) return Buffer.from(crlf([...std, 'Content-Type: text/plain; charset=utf-8', '', text ?? '', '']));
  const parts = [
    ...(text === null ? [] : [`--${BOUNDARY}`, 'Content-Type: text/plain; charset=utf-8', '', text]),
    `--${BOUNDARY}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    o.html,
    `--${BOUNDARY}--`,
    '',
  ];
  return Buffer.from(crlf([...std, `Content-Type: multipart/alternative; boundary="${BOUNDARY}"`, '', ...parts]));
}

async function signed(message: Buffer, domain: string, headerList?: string): Promise<Buffer> {
  const signature = { signingDomain: domain, selector: 'sel', privateKey: PRIVATE_KEY, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' };
  // mailauth takes the signed header list for all its signatures; without one, its defaults.
  const r = await dkimSign(message, { signTime: new Date(), signatureData: [signature], ...(headerList ? { headerList } : {}) } as never);
  assert.deepEqual(r.errors, []);
  return Buffer.concat([Buffer.from(r.signatures), message]);
}

const UNSUB = ['List-Unsubscribe: <https://good.test/u/123>, <mailto:u@good.test>', 'List-Unsubscribe-Post: List-Unsubscribe=One-Click'];
const SIGNED_HEADERS = 'from:to:subject:date:message-id:list-unsubscribe:list-unsubscribe-post';
const GOOD_HTML = '<html><body><p>Thanks for your order.</p><img src="cid:logo" alt="Logo"><a href="https://good.test/orders/1">Your order</a></body></html>';

const rule = (findings: ReportFinding[], id: string) => {
  const f = findings.find((x) => x.rule === id);
  assert.ok(f, `no finding ${id} in ${JSON.stringify(findings)}`);
  return f;
};

describe('deliverability report: sender rules, content, HTML support', () => {
  let dns: TestDns;
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    dns = await startTestDns();
    fillZone(dns);
    server = await startTestServer({ DNS_SERVERS: dns.server });
    inbox = await createAddress(server);
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  /** Sends the message from `envelope` and answers its report. */
  async function reportOf(message: Buffer, envelope: string, query = ''): Promise<MailReport> {
    await sendMail(server.smtpPort, { from: envelope, to: [inbox.address], message });
    const list = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: inbox.jwt });
    const uuid = list.json.results[0].uuid as string;
    const r = await request(server.httpUrl, `/api/mail/${uuid}/report${query}`, { jwt: inbox.jwt });
    assert.equal(r.status, 200, r.text);
    return r.json as MailReport;
  }

  it('a mail that meets every Gmail and Yahoo rule passes every sender rule, and its content every check', async () => {
    const message = await signed(build({ from: 'news@good.test', to: inbox.address, headers: UNSUB, html: GOOD_HTML }), 'good.test', SIGNED_HEADERS);
    const report = await reportOf(message, 'bounce@good.test');
    assert.deepEqual(
      report.sender.findings.map((f) => [f.rule, f.verdict]),
      [['spf', 'pass'], ['dkim', 'pass'], ['alignment', 'pass'], ['dmarc-published', 'pass'], ['one-click-unsubscribe', 'pass'], ['message-id', 'pass'], ['date', 'pass'], ['single-headers', 'pass']],
    );
    assert.equal(report.sender.verdict, 'pass');
    assert.deepEqual(report.content.findings.filter((f) => f.verdict !== 'pass'), []);
    assert.equal(report.content.verdict, 'pass');
    // Even this HTML uses what some clients drop (<body>, in caniemail's data): the section weighs it, it does not hide it.
    assert.ok(report.html.features.some((f) => f.title === '<body> element'), JSON.stringify(report.html.features));
    assert.equal(report.html.verdict, report.html.support! >= 90 ? 'pass' : report.html.support! >= 70 ? 'warn' : 'fail');
    assert.equal(report.spam.verdict, 'unavailable');
    assert.equal(report.spam.reason, 'No spam scanner is configured (SPAM_SCANNER).');
    assert.equal(report.verdict, report.html.verdict === 'fail' ? 'fail' : report.html.verdict, 'only the HTML support is less than a pass');
    assert.deepEqual(report.links.links, [{ url: 'https://good.test/orders/1', kind: 'link' }]);
    assert.equal(report.links.checked, false);
  });

  it('fails SPF for a client the record does not allow', async () => {
    const report = await reportOf(await signed(build({ from: 'a@spffail.test', to: inbox.address }), 'spffail.test'), 'a@spffail.test');
    assert.equal(rule(report.sender.findings, 'spf').verdict, 'fail');
    assert.equal(rule(report.sender.findings, 'spf').evidence, 'spf=fail');
    assert.equal(report.sender.verdict, 'fail');
    assert.equal(report.verdict, 'fail');
  });

  it('fails DKIM for an unsigned mail (SPF and DMARC still pass)', async () => {
    const report = await reportOf(build({ from: 'a@good.test', to: inbox.address }), 'a@good.test');
    assert.equal(rule(report.sender.findings, 'dkim').verdict, 'fail');
    assert.equal(rule(report.sender.findings, 'dkim').evidence, 'no DKIM-Signature');
    assert.equal(rule(report.sender.findings, 'spf').verdict, 'pass');
    assert.equal(rule(report.sender.findings, 'alignment').verdict, 'pass');
  });

  it('fails alignment when the From domain is neither the signer nor the SPF domain', async () => {
    const report = await reportOf(await signed(build({ from: 'ceo@other.test', to: inbox.address }), 'good.test'), 'bounce@good.test');
    const f = rule(report.sender.findings, 'alignment');
    assert.equal(f.verdict, 'fail');
    assert.match(f.message, /^The From domain other\.test is aligned with neither/);
    assert.equal(rule(report.sender.findings, 'dkim').verdict, 'pass');
  });

  it('fails "DMARC published" for a domain without a record', async () => {
    const report = await reportOf(await signed(build({ from: 'a@nodmarc.test', to: inbox.address }), 'nodmarc.test'), 'a@nodmarc.test');
    const f = rule(report.sender.findings, 'dmarc-published');
    assert.equal(f.verdict, 'fail');
    assert.match(f.message, /_dmarc\.nodmarc\.test/);
    // DMARC none, but the signer is the From domain: aligned all the same.
    assert.equal(rule(report.sender.findings, 'alignment').verdict, 'pass');
  });

  it('fails one-click unsubscribe when the DKIM signature does not cover its headers, or List-Unsubscribe-Post is missing', async () => {
    const uncovered = await reportOf(await signed(build({ from: 'n@good.test', to: inbox.address, headers: UNSUB }), 'good.test', 'from:to:subject:date:message-id'), 'n@good.test');
    const f = rule(uncovered.sender.findings, 'one-click-unsubscribe');
    assert.equal(f.verdict, 'fail');
    assert.match(f.message, /h= tag of a passing DKIM signature/);
    const noPost = await reportOf(await signed(build({ from: 'n@good.test', to: inbox.address, headers: [UNSUB[0]!] }), 'good.test', SIGNED_HEADERS), 'n@good.test');
    assert.equal(rule(noPost.sender.findings, 'one-click-unsubscribe').verdict, 'fail');
    assert.equal(rule(noPost.content.findings, 'list-unsubscribe').verdict, 'pass');
    assert.equal(rule(noPost.content.findings, 'list-unsubscribe-post').verdict, 'warn');
    const none = await reportOf(await signed(build({ from: 'n@good.test', to: inbox.address }), 'good.test'), 'n@good.test');
    assert.equal(rule(none.sender.findings, 'one-click-unsubscribe').verdict, 'warn', 'transactional mail may go without');
  });

  it('fails Message-ID and Date when missing, and a repeated Subject', async () => {
    const message = build({ from: 'a@good.test', to: inbox.address, omit: ['date', 'message-id'], headers: ['Subject: A second subject'] });
    const report = await reportOf(await signed(message, 'good.test'), 'a@good.test');
    assert.equal(rule(report.sender.findings, 'message-id').verdict, 'fail');
    assert.equal(rule(report.sender.findings, 'date').verdict, 'fail');
    const single = rule(report.sender.findings, 'single-headers');
    assert.equal(single.verdict, 'fail');
    assert.match(single.message, /: Subject\. Gmail refuses such mail\.$/);
  });

  it('content: scripts, frames, forms, images without alt, remote fonts, shorteners, pixels, no text part, clipped size', async () => {
    const filler = `<p>${'Lorem ipsum dolor sit amet. '.repeat(4000)}</p>`;
    const html = [
      '<html><head><style>@font-face { font-family: X; src: url(https://fonts.example/x.woff2); }</style></head><body>',
      '<script>alert(1)</script><iframe src="https://frame.example/"></iframe><form action="https://f.example/"><input type="text"></form>',
      '<img src="https://img.example/a.png"><img src="https://t.example/p.gif" width="1" height="1">',
      '<a href="https://bit.ly/abc">short</a>',
      filler,
      '</body></html>',
    ].join('');
    const report = await reportOf(await signed(build({ from: 'a@good.test', to: inbox.address, html, text: null }), 'good.test'), 'a@good.test');
    const verdicts = Object.fromEntries(report.content.findings.map((f) => [f.rule, f.verdict]));
    assert.deepEqual(verdicts, {
      'img-alt': 'warn',
      script: 'fail',
      form: 'warn',
      iframe: 'fail',
      'remote-fonts': 'warn',
      'url-shortener': 'warn',
      'tracking-pixel': 'warn',
      'html-size': 'fail',
      'text-part': 'warn',
      'list-unsubscribe': 'warn',
      'list-unsubscribe-post': 'warn',
    });
    assert.equal(rule(report.content.findings, 'img-alt').evidence, 'https://img.example/a.png', 'the pixel is not asked for an alt text');
    assert.equal(rule(report.content.findings, 'tracking-pixel').evidence, 'https://t.example/p.gif');
    assert.equal(rule(report.content.findings, 'url-shortener').evidence, 'https://bit.ly/abc');
    assert.equal(rule(report.content.findings, 'remote-fonts').evidence, 'https://fonts.example/x.woff2');
    assert.match(rule(report.content.findings, 'html-size').message, /Gmail clips a message past 102 KiB/);
    assert.equal(report.content.verdict, 'fail');
  });

  it('HTML support: features some clients lack, by client, from the caniemail data', async () => {
    const html = '<html><head><style>.a { display: flex; }</style></head><body><div class="a" style="display:grid"><p>x</p></div><form><input type="text"></form></body></html>';
    const report = await reportOf(await signed(build({ from: 'a@good.test', to: inbox.address, html }), 'good.test'), 'a@good.test');
    const h = report.html;
    assert.ok(h.clients >= 25, `${h.clients} clients`);
    const flex = h.features.find((f) => f.title === 'display:flex');
    assert.ok(flex, JSON.stringify(h.features.map((f) => f.title)));
    assert.ok(flex.unsupported.includes('outlook.windows'), JSON.stringify(flex));
    assert.ok(h.features.some((f) => f.title === '<form> element'));
    assert.equal(h.supported! + new Set(h.features.flatMap((f) => f.unsupported)).size, h.clients);
    assert.ok(h.support! > 0 && h.support! < 90, String(h.support));
    assert.ok(h.verdict === 'warn' || h.verdict === 'fail');
    assert.match(h.findings[0]!.message, new RegExp(`^${h.support}% of what this HTML uses is supported across ${h.clients} mail clients`));
    assert.match(h.data_date, /^\d{4}-\d{2}-\d{2}/);
  });

  it('hostile HTML (100,000 nested elements, a million attributes): answered within a bound, its HTML check unavailable with why', async () => {
    const deep = `<html><body>${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}</body></html>`;
    const t = performance.now();
    const nested = await reportOf(build({ from: 'a@good.test', to: inbox.address, html: deep }), 'a@good.test');
    assert.equal(nested.html.verdict, 'unavailable');
    assert.equal(nested.html.reason, 'The HTML nests 100002 elements deep (more than 400); it is not checked.');
    assert.equal(nested.content.verdict !== 'unavailable', true);
    const attrs = (n: number) => `<html><body><p ${'a=1 '.repeat(n)}>x</p></body></html>`;
    const many = await reportOf(build({ from: 'a@good.test', to: inbox.address, html: attrs(250_000) }), 'a@good.test');
    assert.equal(many.html.verdict, 'unavailable');
    assert.equal(many.html.reason, 'The HTML has more than 200000 attributes; it is not checked.');
    const million = await reportOf(build({ from: 'a@good.test', to: inbox.address, html: attrs(1_000_000) }), 'a@good.test');
    assert.equal(million.html.reason, 'The HTML is larger than 2 MiB; it is not checked.');
    assert.equal(million.content.findings.find((f) => f.rule === 'html-size')?.verdict, 'fail', 'the other checks still ran');
    const ms = performance.now() - t;
    // Three deliveries of up to 4 MB and three reports: the bound is the report worker's 10 s budget each, not luck.
    assert.ok(ms < 45_000, `${ms} ms`);
  });

  it('another address\'s mail is 404, no token 401, a malformed uuid 404', async () => {
    await sendMail(server.smtpPort, { from: 'a@good.test', to: [inbox.address], message: build({ from: 'a@good.test', to: inbox.address }) });
    const uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: inbox.jwt })).json.results[0].uuid as string;
    const other = await createAddress(server);
    const foreign = await request(server.httpUrl, `/api/mail/${uuid}/report`, { jwt: other.jwt });
    assert.equal(foreign.status, 404);
    assert.match(foreign.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/report`)).status, 401);
    assert.equal((await request(server.httpUrl, '/api/mail/not-a-uuid/report', { jwt: inbox.jwt })).status, 404);
  });
});

describe('deliverability report: rate limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ RATE_LIMIT_PARSED_MAIL: '2/3600' });
  });
  after(() => server?.close());

  it('counts with the parsed view under RATE_LIMIT_PARSED_MAIL: the third in the window is 429 with Retry-After', async () => {
    const inbox = await createAddress(server);
    await sendMail(server.smtpPort, { to: [inbox.address], message: 'Subject: x\r\n\r\nhello\r\n' });
    const uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: inbox.jwt })).json.results[0].uuid as string;
    assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/report`, { jwt: inbox.jwt })).status, 200);
    assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt: inbox.jwt })).status, 200);
    const third = await request(server.httpUrl, `/api/mail/${uuid}/report`, { jwt: inbox.jwt });
    assert.equal(third.status, 429);
    const retry = Number(third.headers.get('retry-after'));
    assert.ok(retry > 3500 && retry <= 3600, `Retry-After ${retry}`);
  });
});
