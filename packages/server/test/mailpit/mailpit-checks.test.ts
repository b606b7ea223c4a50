// Mailpit's HTML check, link check and SpamAssassin check (GET /api/v1/message/{ID}/html-check,
// /link-check, /sa-check) through the published mailpit-api client, unchanged, on a sandbox:
// sections of the deliverability report in Mailpit's shapes, against a real spamd and a
// real link target on loopback (REPORT_LINKS_ALLOW_PRIVATE=true).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MailpitClient } from 'mailpit-api';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { scannerMissing, startSpamd, type RunningScanner } from '../helpers/spam-scanners.js';

const LOGIN = { username: 'checks', password: 'checks-secret-1' };

async function smtpSend(server: TestServer, message: SendMailOptions) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, auth: { user: LOGIN.username, pass: LOGIN.password } });
  try {
    return await transport.sendMail(message);
  } finally {
    transport.close();
  }
}

describe("Mailpit's checks on a sandbox, with the mailpit-api client", { skip: scannerMissing('spamd') }, () => {
  let server: TestServer;
  let spamd: RunningScanner;
  let target: Server;
  let base: string;
  const asked: string[] = [];
  let client: MailpitClient;
  before(async () => {
    target = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.statusCode = req.url === '/ok' ? 200 : 404;
      res.end();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
    spamd = await startSpamd();
    server = await startTestServer({ SANDBOXES: `${LOGIN.username}:${LOGIN.password}`, SPAM_SCANNER: spamd.url, REPORT_LINKS_ALLOW_PRIVATE: 'true' });
    client = new MailpitClient(`${server.httpUrl}/mailpit`, { auth: LOGIN });
    await smtpSend(server, {
      from: 'shop@example.com',
      to: 'alice@example.org',
      subject: 'Your order',
      text: 'Your order has shipped.',
      html: `<html><body><div style="display:flex"><p>Your order has shipped.</p><a href="${base}/ok">track</a> <a href="${base}/gone">old</a> <a href="${base}/unsubscribe?u=1">unsubscribe</a></div></body></html>`,
    });
  });
  after(async () => {
    await server?.close();
    await spamd?.close();
    await new Promise((r) => target?.close(r));
  });

  it('webui says the SpamAssassin check is there', async () => {
    assert.equal((await client.getConfiguration()).SpamAssassin, true);
  });

  it('html-check: caniemail.com features in Mailpit\'s shape, with every platform and a total', async () => {
    const check = await client.htmlCheck('latest');
    assert.ok(Object.keys(check.Platforms).includes('Gmail'), JSON.stringify(check.Platforms));
    assert.ok(check.Total.Tests >= check.Warnings.length && check.Total.Nodes >= 5, JSON.stringify(check.Total));
    assert.equal(Math.round((check.Total.Supported + check.Total.Partial + check.Total.Unsupported) * 100) / 100, 100);
    const flex = check.Warnings.find((w) => w.Title === 'display:flex');
    assert.ok(flex, JSON.stringify(check.Warnings.map((w) => w.Title)));
    assert.equal(flex.Slug, 'css-display-flex');
    assert.equal(flex.Category, 'css');
    assert.equal(flex.URL, 'https://www.caniemail.com/features/css-display-flex/');
    const outlook = flex.Results.find((r) => r.Family === 'Outlook' && r.Platform === 'windows');
    assert.equal(outlook?.Support, 'no');
  });

  it('link-check: each link\'s status; an unsubscribe link is never fetched', async () => {
    const check = await client.linkCheck('latest');
    const byUrl = Object.fromEntries(check.Links.map((l) => [l.URL, l]));
    assert.equal(byUrl[`${base}/ok`]?.StatusCode, 200);
    assert.equal(byUrl[`${base}/ok`]?.Status, '200 OK');
    assert.equal(byUrl[`${base}/gone`]?.StatusCode, 404);
    assert.equal(byUrl[`${base}/unsubscribe?u=1`]?.StatusCode, 0);
    assert.match(byUrl[`${base}/unsubscribe?u=1`]!.Status, /^Never fetched/);
    assert.equal(check.Errors, 1);
    assert.deepEqual(asked.sort(), ['HEAD /gone', 'HEAD /ok']);
  });

  it('sa-check: the score and rules of a real spamd', async () => {
    const check = await client.spamAssassinCheck('latest');
    assert.equal(check.Error, '');
    assert.equal(typeof check.Score, 'number');
    assert.ok(Array.isArray(check.Rules) && check.Rules.length > 0);
    assert.equal(check.IsSpam, false);
  });
});

describe("Mailpit's checks without a scanner, and a mail without HTML", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SANDBOXES: `${LOGIN.username}:${LOGIN.password}` });
    await smtpSend(server, { from: 'a@example.com', to: 'b@example.org', subject: 'plain', text: 'hello' });
  });
  after(() => server?.close());

  it('sa-check says why in Error; html-check of a text mail is a 400 that says so; webui says no SpamAssassin', async () => {
    const client = new MailpitClient(`${server.httpUrl}/mailpit`, { auth: LOGIN });
    assert.equal((await client.getConfiguration()).SpamAssassin, false);
    const sa = await client.spamAssassinCheck('latest');
    assert.deepEqual(sa, { Error: 'No spam scanner is configured (SPAM_SCANNER).', IsSpam: false, Score: 0, Rules: null });
    const res = await fetch(`${server.httpUrl}/mailpit/api/v1/message/latest/html-check`, { headers: { authorization: `Basic ${Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString('base64')}` } });
    assert.equal(res.status, 400);
    assert.equal(await res.text(), 'This message has no HTML part.');
  });
});
