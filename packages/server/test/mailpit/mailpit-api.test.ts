// The Mailpit-compatible API (docs/api.md "Moving from Mailpit or MailHog") driven by the
// published client mailpit-api, unchanged, pointed at <server>/mailpit with a sandbox's name
// and password; the mail arrives over real SMTP sessions with AUTH (nodemailer). Then every
// route's errors over raw HTTP, the isolation of two sandboxes, and (PostgreSQL) two nodes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MailpitClient } from 'mailpit-api';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { hashesStarted } from '../../src/domain/passwords.js';
import { request, startTestServer, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

const ALPHA = { username: 'alpha', password: 'alpha-secret-1' };
const BETA = { username: 'beta', password: 'beta-secret-2' };
const SANDBOXES = `${ALPHA.username}:${ALPHA.password} ${BETA.username}:${BETA.password}`;

const basic = (c: { username: string; password: string }) => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
const mailpit = (server: TestServer, who = ALPHA) => new MailpitClient(`${server.httpUrl}/mailpit`, { auth: who });

/** Sends one message over SMTP, logged in as the sandbox. */
async function smtpSend(server: TestServer, who: { username: string; password: string }, message: SendMailOptions) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, auth: { user: who.username, pass: who.password } });
  try {
    return await transport.sendMail(message);
  } finally {
    transport.close();
  }
}

const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const REPORT = Buffer.from('%PDF-1.4\n\x00\xff report');

const rich = (subject: string): SendMailOptions => ({
  from: '"Shop Team" <shop@example.com>',
  to: '"Alice" <alice@example.org>',
  cc: 'Carol <carol@example.org>',
  bcc: 'hidden@example.net',
  replyTo: 'support@example.com',
  subject,
  text: 'Your order 4711 has shipped.',
  html: '<p>Your order <b>4711</b> has shipped.</p><img src="cid:logo@shop">',
  attachments: [
    { filename: 'report.pdf', content: REPORT, contentType: 'application/pdf' },
    { filename: 'logo.png', content: PIXEL, contentType: 'image/png', cid: 'logo@shop' },
  ],
});

describe('Mailpit-compatible API: the mailpit-api client, unchanged', () => {
  let server: TestServer;
  let client: MailpitClient;
  before(async () => {
    server = await startTestServer({ SANDBOXES });
    client = mailpit(server);
  });
  after(async () => server?.close());

  it('answers info and webui for the sandbox', async () => {
    const info = await client.getInfo();
    assert.equal(info.Messages, 0);
    assert.equal(info.Unread, 0);
    assert.deepEqual(info.Tags, {});
    assert.equal(typeof info.RuntimeStats.Uptime, 'number');
    const ui = await client.getConfiguration();
    assert.equal(ui.Label, 'alpha');
    assert.equal(ui.MessageRelay.Enabled, false);
    assert.equal(ui.ChaosEnabled, true);
  });

  it("checks a polling client's password once, a wrong one every time", async () => {
    await client.getInfo();
    const before = hashesStarted();
    for (let i = 0; i < 20; i++) await client.listMessages();
    assert.equal(hashesStarted() - before, 0, 'a login that succeeded is remembered');
    const wrong = mailpit(server, { username: ALPHA.username, password: 'not-it' });
    await assert.rejects(wrong.getInfo(), /401 Unauthorized/);
    await assert.rejects(wrong.getInfo(), /401 Unauthorized/);
    assert.equal(hashesStarted() - before, 2, 'a wrong password is hashed each time');
  });

  it('lists, reads and renders mail sent over SMTP AUTH', async () => {
    await smtpSend(server, ALPHA, { from: 'first@example.com', to: 'bob@example.org', subject: 'First one', text: 'plain first' });
    const sent = await smtpSend(server, ALPHA, rich('Order shipped'));
    assert.match(sent.response, /^250/);

    const list = await client.listMessages();
    assert.equal(list.total, 2);
    assert.equal(list.unread, 2);
    assert.equal(list.messages_count, 2);
    assert.equal(list.count, 2);
    assert.equal(list.start, 0);
    assert.deepEqual(list.tags, []);
    const [newest, oldest] = list.messages;
    assert.equal(newest!.Subject, 'Order shipped');
    assert.equal(oldest!.Subject, 'First one');
    assert.equal(newest!.Read, false);
    assert.deepEqual(newest!.From, { Name: 'Shop Team', Address: 'shop@example.com' });
    assert.deepEqual(newest!.To, [{ Name: 'Alice', Address: 'alice@example.org' }]);
    // Cc and Reply-To from the stored metadata, Bcc the envelope's recipients that To and Cc do not name.
    assert.deepEqual(newest!.Cc, [{ Name: 'Carol', Address: 'carol@example.org' }]);
    assert.deepEqual(newest!.Bcc, [{ Name: '', Address: 'hidden@example.net' }]);
    assert.deepEqual(newest!.ReplyTo, [{ Name: '', Address: 'support@example.com' }]);
    assert.deepEqual([oldest!.Cc, oldest!.Bcc, oldest!.ReplyTo], [[], [], []]);
    assert.equal(newest!.Attachments, 2);
    assert.match(newest!.Snippet, /order 4711 has shipped/);
    assert.equal(newest!.Username, 'alpha');
    assert.ok(newest!.Size > 0);
    assert.ok(!Number.isNaN(Date.parse(newest!.Created)));

    const paged = await client.listMessages(1, 1);
    assert.equal(paged.messages.length, 1);
    assert.equal(paged.messages[0]!.ID, oldest!.ID);
    assert.equal(paged.start, 1);

    const summary = await client.getMessageSummary(newest!.ID);
    assert.equal(summary.ID, newest!.ID);
    assert.equal(summary.Subject, 'Order shipped');
    assert.equal(summary.Text.trim(), 'Your order 4711 has shipped.');
    assert.match(summary.HTML, /<b>4711<\/b>/);
    assert.deepEqual(summary.Cc, [{ Name: 'Carol', Address: 'carol@example.org' }]);
    assert.deepEqual(summary.Bcc, [{ Name: '', Address: 'hidden@example.net' }]);
    assert.deepEqual(summary.ReplyTo, [{ Name: '', Address: 'support@example.com' }]);
    assert.equal(summary.ReturnPath, 'shop@example.com');
    assert.deepEqual(
      summary.Attachments.map((a) => [a.FileName, a.ContentType, a.Size]),
      [['report.pdf', 'application/pdf', REPORT.length]],
    );
    assert.deepEqual(
      summary.Inline.map((a) => [a.FileName, a.ContentID]),
      [['logo.png', 'logo@shop']],
    );
    assert.deepEqual(summary.Attachments[0]!.Checksums, {
      MD5: createHash('md5').update(REPORT).digest('hex'),
      SHA1: createHash('sha1').update(REPORT).digest('hex'),
      SHA256: createHash('sha256').update(REPORT).digest('hex'),
    });
    assert.equal(summary.Inline[0]!.Checksums.SHA256, createHash('sha256').update(PIXEL).digest('hex'));
    assert.deepEqual(summary.Tags, []);
    assert.ok(summary.MessageID.length > 0 && !summary.MessageID.startsWith('<'));
    // Reading the summary marks it read, as Mailpit does.
    assert.equal((await client.listMessages()).unread, 1);

    const latest = await client.getMessageSummary();
    assert.equal(latest.ID, newest!.ID);

    const headers = await client.getMessageHeaders(newest!.ID);
    assert.deepEqual(headers['Subject'], ['Order shipped']);
    const names = Object.keys(headers);
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes('Content-Type'));

    const source = await client.getMessageSource(newest!.ID);
    assert.match(source, /^Received: /);
    assert.match(source, /\r\nSubject: Order shipped\r\n/);

    const pdf = await client.getMessageAttachment(newest!.ID, summary.Attachments[0]!.PartID);
    assert.deepEqual(Buffer.from(await pdf.arrayBuffer()), REPORT);
    assert.equal(pdf.type, 'application/pdf');

    const html = await client.renderMessageHTML(newest!.ID);
    assert.match(html, /<b>4711<\/b>/);
    assert.match(html, new RegExp(`src="\\.\\./api/v1/message/${newest!.ID}/part/${summary.Inline[0]!.PartID}"`));
    assert.equal((await client.renderMessageText(newest!.ID)).trim(), 'Your order 4711 has shipped.');
    // Shown from this origin: sandboxed, no script, nothing loaded from elsewhere.
    const page = await request(server.httpUrl, `/mailpit/view/${newest!.ID}.html`, { headers: { authorization: basic(ALPHA) } });
    assert.match(page.headers.get('content-security-policy') ?? '', /^sandbox; default-src 'none'; img-src 'self' data:/);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    await assert.rejects(client.renderMessageHTML(oldest!.ID), /404 Not Found.*no HTML part/);
    assert.equal((await client.renderMessageText(oldest!.ID)).trim(), 'plain first');
    // The inline image's link, as the browser showing the view resolves it.
    const image = await request(server.httpUrl, `/mailpit/api/v1/message/${newest!.ID}/part/${summary.Inline[0]!.PartID}`, { headers: { authorization: basic(ALPHA) } });
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
  });

  it('searches with Mailpit filters and waits for a message', async () => {
    const search = async (query: string) => (await client.searchMessages({ query })).messages.map((m) => m.Subject).sort();
    assert.deepEqual(await search('from:shop@example.com'), ['Order shipped']);
    assert.deepEqual(await search('subject:first'), ['First one']);
    assert.deepEqual(await search('has:attachment'), ['Order shipped']);
    assert.deepEqual(await search('is:unread'), ['First one']);
    assert.deepEqual(await search('is:read'), ['Order shipped']);
    assert.deepEqual(await search('-from:shop@example.com'), ['First one']);
    assert.deepEqual(await search('"order 4711"'), ['Order shipped']);
    assert.deepEqual(await search('shipped'), ['Order shipped']);
    assert.deepEqual(await search('to:bob'), ['First one']);
    assert.deepEqual(await search('after:2000-01-01 before:2999-01-01'), ['First one', 'Order shipped']);
    assert.deepEqual(await search('before:2000-01-01'), []);
    const result = await client.searchMessages({ query: 'is:unread' });
    assert.equal(result.messages_count, 1);
    assert.equal(result.messages_unread, 1);
    assert.equal(result.total, 2);
    assert.equal(result.unread, 1);
    // tz: the dates are that zone's days. Kiritimati is 14 hours ahead of UTC: its today
    // began before these mails arrived, and is often tomorrow in UTC.
    const kiritimatiToday = new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10);
    assert.equal((await client.searchMessages({ query: `after:${kiritimatiToday}`, tz: 'Pacific/Kiritimati' })).messages.length, 2);
    assert.equal((await client.searchMessages({ query: `before:${kiritimatiToday}`, tz: 'Pacific/Kiritimati' })).messages.length, 0);

    const waiting = client.waitForMessage({ query: 'subject:"arrives later"' }, { timeout: 20_000, interval: 100 });
    await smtpSend(server, ALPHA, { from: 'late@example.com', to: 'bob@example.org', subject: 'It arrives later', text: 'late' });
    assert.equal((await waiting).Subject, 'It arrives later');
    const all = await client.waitForMessages({ count: 3 }, { timeout: 5000, interval: 100 });
    assert.equal(all.messages_count, 3);
  });

  it('sets read status by IDs, by search and for all', async () => {
    const ids = (await client.listMessages()).messages.map((m) => m.ID);
    await client.setReadStatus({ IDs: [ids[0]!], Read: true });
    assert.equal((await client.getMessageSummary(ids[0]!) as unknown as { Read: boolean }).Read, true);
    assert.equal(await client.setReadStatus({ Read: false }), 'ok');
    assert.equal((await client.listMessages()).unread, 3);
    await client.setReadStatus({ Search: 'subject:first', Read: true });
    assert.deepEqual((await client.searchMessages({ query: 'is:read' })).messages.map((m) => m.Subject), ['First one']);
    await client.setReadStatus({ Read: true });
    assert.equal((await client.listMessages()).unread, 0);
  });

  it('tags messages, renames and deletes tags', async () => {
    const ids = (await client.listMessages()).messages.map((m) => m.ID);
    assert.equal(await client.setTags({ IDs: [ids[0]!, ids[1]!], Tags: ['Invoices', 'urgent!'] }), 'ok');
    assert.deepEqual(await client.getTags(), ['Invoices', 'urgent']);
    const list = await client.listMessages();
    assert.deepEqual(list.tags, ['Invoices', 'urgent']);
    assert.deepEqual(list.messages[0]!.Tags, ['Invoices', 'urgent']);
    assert.deepEqual(list.messages[2]!.Tags, []);
    assert.deepEqual((await client.getInfo()).Tags, { Invoices: 2, urgent: 2 });
    await client.renameTag('urgent', 'later');
    assert.deepEqual(await client.getTags(), ['Invoices', 'later']);
    await client.deleteTag('Invoices');
    assert.deepEqual(await client.getTags(), ['later']);
    assert.deepEqual((await client.getMessageSummary(ids[1]!)).Tags, ['later']);
    await client.setTags({ IDs: [ids[0]!, ids[1]!] });
    assert.deepEqual(await client.getTags(), []);
  });

  it('stores what POST /api/v1/send gives, with its tags and envelope, and sends nothing', async () => {
    const { ID } = await client.sendMessage({
      From: { Email: 'app@example.com', Name: 'Die App' },
      To: [{ Email: 'user@example.org', Name: 'Jürgen Ünal' }],
      Cc: [{ Email: 'cc@example.org' }],
      Bcc: ['secret@example.org'],
      ReplyTo: [{ Email: 'reply@example.com' }],
      Subject: 'Grüße aus der API',
      Text: 'Hallo Welt',
      HTML: '<p>Hallo <i>Welt</i></p>',
      Headers: { 'X-Campaign': 'spring' },
      Tags: ['api', 'welcome'],
      Attachments: [{ Filename: 'hello.txt', Content: Buffer.from('hello file').toString('base64'), ContentType: 'text/plain' }],
    });
    const m = await client.getMessageSummary(ID);
    assert.equal(m.Subject, 'Grüße aus der API');
    assert.deepEqual(m.From, { Name: 'Die App', Address: 'app@example.com' });
    assert.deepEqual(m.To, [{ Name: 'Jürgen Ünal', Address: 'user@example.org' }]);
    assert.deepEqual(m.Cc, [{ Name: '', Address: 'cc@example.org' }]);
    assert.deepEqual(m.Bcc, [{ Name: '', Address: 'secret@example.org' }]);
    assert.deepEqual(m.ReplyTo, [{ Name: '', Address: 'reply@example.com' }]);
    assert.equal(m.Text.trim(), 'Hallo Welt');
    assert.match(m.HTML, /<i>Welt<\/i>/);
    assert.deepEqual(m.Tags, ['api', 'welcome']);
    assert.deepEqual((await client.getMessageHeaders(ID))['X-Campaign'], ['spring']);
    const file = await client.getMessageAttachment(ID, m.Attachments[0]!.PartID);
    assert.equal(Buffer.from(await file.arrayBuffer()).toString(), 'hello file');
    assert.deepEqual(await client.getTags(), ['api', 'welcome']);
  });

  it('gets and sets chaos triggers, which the sandbox\'s own SMTP sessions then meet', async () => {
    assert.deepEqual(await client.getChaosTriggers(), {
      Sender: { ErrorCode: 451, Probability: 0 },
      Recipient: { ErrorCode: 451, Probability: 0 },
      Authentication: { ErrorCode: 535, Probability: 0 },
    });
    const set = await client.setChaosTriggers({ Recipient: { ErrorCode: 452, Probability: 100 } });
    assert.deepEqual(set.Recipient, { ErrorCode: 452, Probability: 100 });
    assert.deepEqual(set.Sender, { ErrorCode: 451, Probability: 0 });
    await assert.rejects(smtpSend(server, ALPHA, { from: 'a@example.com', to: 'b@example.org', subject: 'x', text: 'x' }), /452/);
    // Another sandbox's sessions are not touched.
    await smtpSend(server, BETA, { from: 'a@example.com', to: 'b@example.org', subject: 'beta mail', text: 'x' });
    assert.deepEqual(await client.setChaosTriggers(), {
      Sender: { ErrorCode: 451, Probability: 0 },
      Recipient: { ErrorCode: 451, Probability: 0 },
      Authentication: { ErrorCode: 535, Probability: 0 },
    });
    await assert.rejects(client.setChaosTriggers({ Sender: { ErrorCode: 200, Probability: 5 } }), /400 Bad Request.*error code must be between 400 and 599/);
  });

  it('answers the checks from the deliverability report (mailpit-checks.test.ts has them in full), and release as refused', async () => {
    assert.ok((await client.htmlCheck()).Total.Tests > 0);
    assert.deepEqual(await client.linkCheck(), { Errors: 0, Links: [] });
    assert.deepEqual(await client.spamAssassinCheck(), { Error: 'No spam scanner is configured (SPAM_SCANNER).', IsSpam: false, Score: 0, Rules: null });
    await assert.rejects(client.releaseMessage('latest', { To: ['x@example.org'] }), /403 Forbidden.*never relays/);
  });

  it('keeps two sandboxes apart', async () => {
    const beta = mailpit(server, BETA);
    const betaList = await beta.listMessages();
    assert.deepEqual(
      betaList.messages.map((m) => m.Subject),
      ['beta mail'],
    );
    const alphaIds = (await client.listMessages()).messages.map((m) => m.ID);
    await assert.rejects(beta.getMessageSummary(alphaIds[0]!), /404 Not Found/);
    for (const path of ['', '/headers', '/raw', '/part/0']) {
      const res = await request(server.httpUrl, `/mailpit/api/v1/message/${alphaIds[0]}${path}`, { headers: { authorization: basic(BETA) } });
      assert.equal(res.status, 404, path);
    }
    assert.equal((await request(server.httpUrl, `/mailpit/view/${alphaIds[0]}.html`, { headers: { authorization: basic(BETA) } })).status, 404);
    await beta.deleteMessages({ IDs: alphaIds });
    await beta.setTags({ IDs: alphaIds, Tags: ['stolen'] });
    await beta.deleteMessagesBySearch({ query: 'shipped' });
    assert.equal((await client.listMessages()).total, alphaIds.length);
    assert.deepEqual(await client.getTags(), ['api', 'welcome']);
    assert.deepEqual((await beta.searchMessages({ query: 'shipped' })).messages, []);
  });

  it('deletes by IDs, by search and all', async () => {
    const before = (await client.listMessages()).messages;
    await client.deleteMessages({ IDs: [before[0]!.ID] });
    assert.equal((await client.listMessages()).total, before.length - 1);
    await client.deleteMessagesBySearch({ query: 'subject:first' });
    assert.deepEqual((await client.searchMessages({ query: 'subject:first' })).messages, []);
    await client.deleteMessages();
    assert.equal((await client.listMessages()).total, 0);
    assert.equal((await mailpit(server, BETA).listMessages()).total, 1);
  });
});

describe('Mailpit-compatible API: errors', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SANDBOXES, SANDBOX_LOGIN_FAILURES: '3/600' });
  });
  after(async () => server?.close());
  const get = (path: string, authorization?: string, opts: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    request(server.httpUrl, `/mailpit${path}`, { method: opts.method ?? 'GET', ...(opts.body === undefined ? {} : { body: opts.body as string }), headers: { ...(authorization ? { authorization } : {}), ...opts.headers } });

  it('asks for Basic credentials on every route', async () => {
    const routes: [string, string][] = [
      ['GET', '/api/v1/info'],
      ['GET', '/api/v1/webui'],
      ['GET', '/api/v1/messages'],
      ['PUT', '/api/v1/messages'],
      ['DELETE', '/api/v1/messages'],
      ['GET', '/api/v1/message/latest'],
      ['GET', '/api/v1/message/latest/headers'],
      ['GET', '/api/v1/message/latest/raw'],
      ['GET', '/api/v1/message/latest/part/0'],
      ['GET', '/api/v1/message/latest/html-check'],
      ['POST', '/api/v1/message/latest/release'],
      ['GET', '/api/v1/search?query=x'],
      ['DELETE', '/api/v1/search?query=x'],
      ['POST', '/api/v1/send'],
      ['GET', '/api/v1/chaos'],
      ['PUT', '/api/v1/chaos'],
      ['GET', '/api/v1/tags'],
      ['PUT', '/api/v1/tags'],
      ['PUT', '/api/v1/tags/a'],
      ['DELETE', '/api/v1/tags/a'],
      ['GET', '/view/latest.html'],
      ['GET', '/view/latest.txt'],
    ];
    for (const [method, path] of routes) {
      const res = await get(path, undefined, { method });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="mailpit", charset="UTF-8"');
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    }
    assert.equal((await get('/api/v1/info', basic({ username: 'alpha', password: 'nope' }))).status, 401);
    assert.equal((await get('/api/v1/info', 'Basic !!!')).status, 401);
    assert.equal((await get('/api/v1/info', 'Bearer abc')).status, 401);
    assert.equal((await get('/api/v1/info', basic({ username: 'nobody', password: 'x' }))).status, 401);
    // Wrong passwords from this client lock it out (SANDBOX_LOGIN_FAILURES 3/600): 429 with Retry-After, even with the right one.
    let refused = 0;
    for (let i = 0; i < 5 && refused !== 429; i++) refused = (await get('/api/v1/info', basic({ username: 'alpha', password: `wrong-${i}` }))).status;
    assert.equal(refused, 429);
    const locked = await get('/api/v1/info', basic(ALPHA));
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
  });
});

describe('Mailpit-compatible API: bad input', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SANDBOXES, MAX_MESSAGE_BYTES: '400000' });
  });
  after(async () => server?.close());
  const call = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    request(server.httpUrl, `/mailpit${path}`, { method, ...(body === undefined ? {} : { body }), headers: { authorization: basic(ALPHA), ...headers } });

  it('answers each with a plain-text 4xx', async () => {
    const cases: [string, string, string | undefined, number, RegExp, Record<string, string>?][] = [
      ['GET', '/api/v1/messages?limit=ten', undefined, 400, /limit must be a whole number/],
      ['GET', '/api/v1/messages?start=-1', undefined, 400, /start must be a whole number/],
      ['GET', '/api/v1/search', undefined, 400, /no search query/],
      ['GET', '/api/v1/search?query=%22open', undefined, 400, /not closed/],
      ['GET', '/api/v1/search?query=addressed%3Aalice', undefined, 400, /addressed: is not supported/],
      ['GET', '/api/v1/search?query=larger%3A12Q', undefined, 400, /larger:12Q is not a size/],
      ['GET', '/api/v1/search?query=is%3Astarred', undefined, 400, /is:starred is not known/],
      ['GET', '/api/v1/search?query=before%3A2024-13-01', undefined, 400, /not a date/],
      ['GET', '/api/v1/search?query=before%3A2024-01-01&tz=Mars%2FOlympus', undefined, 400, /Unknown time zone/],
      ['DELETE', '/api/v1/search', undefined, 400, /no search query/],
      ['GET', '/api/v1/message/latest', undefined, 404, /No message found/],
      ['GET', '/api/v1/message/00000000-0000-0000-0000-000000000000', undefined, 404, /No such mail/],
      ['GET', '/api/v1/message/nope/part/0', undefined, 404, /No such attachment|No such mail/],
      ['GET', '/view/nope', undefined, 404, /use \/view\/\{ID\}\.html/],
      ['PUT', '/api/v1/messages', '{"Read":"yes"}', 400, /Read must be true or false/],
      ['PUT', '/api/v1/messages', '{"IDs":["a"],"Search":"x"}', 400, /either IDs or a search query/],
      ['PUT', '/api/v1/messages', '{"IDs":"a"}', 400, /IDs must be an array/],
      ['PUT', '/api/v1/messages', '[1]', 400, /JSON object/],
      ['PUT', '/api/v1/messages', '{bad', 400, /JSON/],
      ['PUT', '/api/v1/tags', '{"Tags":["a"]}', 400, /IDs must name at least one/],
      ['PUT', '/api/v1/tags/a', '{"Name":"!!!"}', 400, /Invalid tag name/],
      ['PUT', '/api/v1/chaos', '{"Sender":{"ErrorCode":451,"Probability":101}}', 400, /probability must be between 0 and 100/],
      ['PUT', '/api/v1/chaos', '{"Sender":"often"}', 400, /Sender must be an object/],
      ['POST', '/api/v1/send', '{bad', 400, /not valid JSON/],
      ['POST', '/api/v1/send', '{}', 400, /From must be an object/],
      ['POST', '/api/v1/send', '{"From":{"Email":"not an address"}}', 400, /invalid From address/],
      ['POST', '/api/v1/send', '{"From":{"Email":"a@example.com"},"To":[{"Email":"b@example.org\\r\\nBcc: x@evil.test"}]}', 400, /invalid To address/],
      ['POST', '/api/v1/send', '{"From":{"Email":"a@example.com"},"Headers":{"Subject":"x"}}', 400, /cannot overwrite header: "Subject"/],
      ['POST', '/api/v1/send', '{"From":{"Email":"a@example.com"},"Headers":{"Bad Name":"x"}}', 400, /is not a header name/],
      ['POST', '/api/v1/send', '{"From":{"Email":"a@example.com"},"Attachments":[{"Filename":"x","Content":"***"}]}', 400, /error decoding base64 attachment/],
      ['POST', '/api/v1/send', 'From: a', 415, /must be JSON/, { 'content-type': 'text/plain' }],
      ['POST', '/api/v1/send', undefined, 400, /JSON object/],
    ];
    for (const [method, path, body, status, text, headers] of cases) {
      const res = await call(method, path, body, headers);
      assert.equal(res.status, status, `${method} ${path} ${body ?? ''}: ${res.text}`);
      assert.match(res.text, text, `${method} ${path}`);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, `${method} ${path}`);
    }
  });

  it('refuses a message larger than MAX_MESSAGE_BYTES with 413, a body past its bound unread', async () => {
    const big = Buffer.alloc(320_000, 7).toString('base64');
    const over = JSON.stringify({ From: { Email: 'a@example.com' }, Attachments: [{ Filename: 'big.bin', Content: big }] });
    const res = await call('POST', '/api/v1/send', over);
    assert.equal(res.status, 413);
    assert.match(res.text, /MAX_MESSAGE_BYTES/);
    const huge = JSON.stringify({ From: { Email: 'a@example.com' }, Text: 'x'.repeat(700_000) });
    assert.equal((await call('POST', '/api/v1/send', huge)).status, 413);
    // Within the bounds a large body is read in a worker and stored.
    const fits = JSON.stringify({ From: { Email: 'a@example.com' }, To: [{ Email: 'b@example.org' }], Subject: 'large', Attachments: [{ Filename: 'ok.bin', Content: Buffer.alloc(200_000, 9).toString('base64') }] });
    assert.ok(fits.length > 256 * 1024, 'a body read in a worker');
    const stored = await call('POST', '/api/v1/send', fits);
    assert.equal(stored.status, 200, stored.text);
    const id = (stored.json as { ID: string }).ID;
    const part = await call('GET', `/api/v1/message/${id}/part/0`);
    assert.equal(part.status, 200);
    // Its checksums are computed in a worker (200 KB of attachment).
    const summary = await call('GET', `/api/v1/message/${id}`);
    assert.equal((summary.json as { Attachments: { Checksums: { SHA256: string } }[] }).Attachments[0]!.Checksums.SHA256, createHash('sha256').update(Buffer.alloc(200_000, 9)).digest('hex'));
  });

  it('counts its routes under RATE_LIMIT_MAILPIT', async () => {
    const limited = await startTestServer({ SANDBOXES, RATE_LIMIT_MAILPIT: '2/60' });
    try {
      const one = () => request(limited.httpUrl, '/mailpit/api/v1/info', { headers: { authorization: basic(ALPHA) } });
      assert.equal((await one()).status, 200);
      assert.equal((await one()).status, 200);
      const third = await one();
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get('retry-after')) > 0);
      // Counted before the credentials: a client without any is limited too.
      assert.equal((await request(limited.httpUrl, '/mailpit/api/v1/info')).status, 429);
    } finally {
      await limited.close();
    }
  });
});

const skip = skipUnless('postgres', 'redis');

describe('Mailpit-compatible API: two nodes on PostgreSQL', { skip }, () => {
  const nodes = twoNodes('mailpit', skip, { SANDBOXES });

  it('shows mail sent to one node on the other, each sandbox only its own', async () => {
    await smtpSend(nodes.a, ALPHA, rich('Across nodes'));
    await smtpSend(nodes.b, BETA, { from: 'x@example.com', to: 'y@example.org', subject: 'Beta on b', text: 'b' });
    const onB = mailpit(nodes.b);
    const list = await onB.listMessages();
    assert.deepEqual(
      list.messages.map((m) => m.Subject),
      ['Across nodes'],
    );
    const id = list.messages[0]!.ID;
    const summary = await onB.getMessageSummary(id);
    assert.equal(summary.Text.trim(), 'Your order 4711 has shipped.');
    assert.deepEqual(summary.Bcc, [{ Name: '', Address: 'hidden@example.net' }]);
    await mailpit(nodes.a).setTags({ IDs: [id], Tags: ['shared', 'gone'] });
    assert.deepEqual(await onB.getTags(), ['gone', 'shared']);
    await onB.deleteTag('gone');
    await onB.renameTag('shared', 'kept');
    await onB.renameTag('kept', 'shared');
    assert.deepEqual((await mailpit(nodes.a).getMessageSummary(id)).Tags, ['shared']);
    assert.deepEqual((await onB.searchMessages({ query: 'has:attachment is:read' })).messages.map((m) => m.ID), [id]);
    // Mailpit's filters and X-Tags on PostgreSQL, through the API.
    assert.deepEqual(
      [list.messages[0]!.Cc, list.messages[0]!.Bcc, list.messages[0]!.ReplyTo],
      [[{ Name: 'Carol', Address: 'carol@example.org' }], [{ Name: '', Address: 'hidden@example.net' }], [{ Name: '', Address: 'support@example.com' }]],
    );
    await smtpSend(nodes.a, ALPHA, { from: 'x@example.com', to: 'y@example.org', subject: 'Tagged on a', text: 'x', headers: { 'X-Tags': 'from-header, Second' } });
    const filters: [string, string[]][] = [
      ['tag:from-header', ['Tagged on a']],
      ['is:tagged', ['Across nodes', 'Tagged on a']],
      ['tag:shared cc:carol bcc:hidden reply-to:support filename:report larger:1K to:hidden@example.net', ['Across nodes']],
      ['smaller:1K -is:read', ['Tagged on a']],
      [`message-id:${list.messages[0]!.MessageID}`, ['Across nodes']],
    ];
    for (const [query, want] of filters) assert.deepEqual((await onB.searchMessages({ query })).messages.map((m) => m.Subject).sort(), want, query);
    const betaOnA = mailpit(nodes.a, BETA);
    assert.deepEqual(
      (await betaOnA.listMessages()).messages.map((m) => m.Subject),
      ['Beta on b'],
    );
    await assert.rejects(betaOnA.getMessageSummary(id), /404 Not Found/);
    assert.deepEqual(await betaOnA.getTags(), []);
    await betaOnA.deleteMessages({ IDs: [id] });
    assert.equal((await onB.listMessages()).total, 2);
  });
});

/** A third sandbox, of the last describe's own, on the server it shares with the X-Tags describe. */
const GAMMA = { username: 'gamma', password: 'gamma-secret-3' };
let tagsServer: Promise<TestServer> | undefined;
const sharedTagsServer = () => (tagsServer ??= startTestServer({ SANDBOXES: `${SANDBOXES} ${GAMMA.username}:${GAMMA.password}` }));
after(async () => (await tagsServer)?.close());

describe("Mailpit-compatible API: X-Tags, Mailpit's search filters, and cypress-mailpit's calls", () => {
  let server: TestServer;
  let client: MailpitClient;
  before(async () => {
    server = await sharedTagsServer();
    client = mailpit(server);
  });

  /** One HTTP call as cy.request makes it: Basic auth, a JSON body when there is one, `qs` encoded into the URL. */
  const cy = async (method: string, path: string, opts: { body?: unknown; qs?: Record<string, string | number> } = {}) => {
    const query = opts.qs ? `?${new URLSearchParams(Object.entries(opts.qs).map(([k, v]) => [k, String(v)])).toString()}` : '';
    const res = await request(server.httpUrl, `/mailpit${path}${query}`, { method, ...(opts.body === undefined ? {} : { body: opts.body }), headers: { authorization: basic(ALPHA) } });
    return { status: res.status, headers: res.headers, text: res.text, json: () => JSON.parse(res.text) as Record<string, unknown> & { messages: Record<string, unknown>[] } };
  };

  it("tags a message by its X-Tags header (cleaned, without repeats, at most 20) and searches by Mailpit's filters", async () => {
    await smtpSend(server, ALPHA, { ...rich('Tagged order'), headers: { 'X-Tags': 'Signup, urgent!, , signup,  Weekly Digest ' } });
    const many = Array.from({ length: 30 }, (_, i) => `t${String(i).padStart(2, '0')}`).join(',');
    await smtpSend(server, ALPHA, { from: 'bulk@example.com', to: 'bob@example.org', subject: 'Many tags', text: 'x', headers: { 'X-Tags': many } });
    await smtpSend(server, ALPHA, { from: 'plain@example.com', to: 'bob@example.org', subject: 'Untagged', text: 'x' });
    const list = await client.listMessages();
    const bySubject = new Map(list.messages.map((m) => [m.Subject, m]));
    assert.deepEqual(bySubject.get('Tagged order')!.Tags, ['Signup', 'Weekly Digest', 'urgent']);
    assert.equal(bySubject.get('Many tags')!.Tags.length, 20);
    assert.deepEqual(bySubject.get('Untagged')!.Tags, []);
    assert.deepEqual((await client.getMessageSummary(bySubject.get('Tagged order')!.ID)).Tags, ['Signup', 'Weekly Digest', 'urgent']);

    const search = async (query: string) => (await client.searchMessages({ query })).messages.map((m) => m.Subject).sort();
    const messageId = bySubject.get('Tagged order')!.MessageID;
    const cases: [string, string[]][] = [
      ['tag:signup', ['Tagged order']],
      ['tag:"weekly digest"', ['Tagged order']],
      ['is:tagged', ['Many tags', 'Tagged order']],
      ['-is:tagged', ['Untagged']],
      ['cc:carol', ['Tagged order']],
      ['bcc:hidden@example.net', ['Tagged order']],
      ['bcc:carol', []],
      ['to:hidden@example.net', ['Tagged order']],
      ['reply-to:support@example.com', ['Tagged order']],
      [`message-id:${messageId}`, ['Tagged order']],
      [`message-id:<${messageId}>`, ['Tagged order']],
      ['filename:report.pdf', ['Tagged order']],
      ['filename:logo', ['Tagged order']],
      ['larger:1K', ['Tagged order']],
      ['smaller:1K', ['Many tags', 'Untagged']],
      ['-tag:signup smaller:1M', ['Many tags', 'Untagged']],
    ];
    for (const [q, want] of cases) assert.deepEqual(await search(q), want, q);
    await assert.rejects(client.searchMessages({ query: 'addressed:alice' }), /400 Bad Request.*addressed: is not supported/);
    await client.deleteMessages();
  });

  // cypress-mailpit 2.0.0 (dist/src/MailpitCommands.js), each call as the plugin makes it.
  it('serves every call of cypress-mailpit with the fields it reads', async () => {
    await client.deleteMessages();
    // mailpitSendMail(): POST /api/v1/send with the plugin's default body.
    const sent = await cy('POST', '/api/v1/send', {
      body: {
        Attachments: [],
        Bcc: ['bcc@example.com'],
        Cc: [{ Email: 'cc@example.com', Name: 'CC' }],
        From: { Email: 'from@example.com', Name: 'From' },
        HTML: '<p>hello from mailpit</p>',
        Headers: {},
        ReplyTo: [{ Email: 'replyto@example.com', Name: 'ReplyTo' }],
        Subject: 'Hello Mailpit',
        Tags: [],
        Text: 'hello from mailpit',
        To: [{ Email: 'jane@example.com', Name: 'Jane' }],
      },
    });
    assert.equal(sent.status, 200, sent.text);
    const id = sent.json()['ID'] as string;
    await smtpSend(server, ALPHA, { from: 'shop@example.com', to: 'bob@example.org', subject: 'Second', text: 'second', attachments: [{ filename: 'a.txt', content: 'a' }] });

    // mailpitGetAllMails(start = 0, limit = 50): GET /api/v1/messages?start=0&limit=50.
    const all = (await cy('GET', '/api/v1/messages?start=0&limit=50')).json();
    assert.equal(all['total'], 2);
    assert.deepEqual(all.messages.map((m) => m['Subject']), ['Second', 'Hello Mailpit']);
    const listed = all.messages[1]!;
    assert.deepEqual([listed['Cc'], listed['Bcc'], listed['ReplyTo']], [[{ Name: 'CC', Address: 'cc@example.com' }], [{ Name: '', Address: 'bcc@example.com' }], [{ Name: 'ReplyTo', Address: 'replyto@example.com' }]]);

    // mailpitGetMail(id = "latest"), then mailpitGetSubject, mailpitGetRecipientAddress, mailpitGetFromAddress, mailpitGetAttachments.
    const latest = (await cy('GET', '/api/v1/message/latest')).json() as unknown as { ID: string; Subject: string; To: { Address: string }[]; From: { Address: string }; Attachments: { FileName: string }[] };
    assert.equal(latest.Subject, 'Second');
    assert.deepEqual(latest.To.map((r) => r.Address), ['bob@example.org']);
    assert.equal(latest.From.Address, 'shop@example.com');
    assert.deepEqual(latest.Attachments.map((a) => a.FileName), ['a.txt']);
    const mail = (await cy('GET', `/api/v1/message/${id}`)).json() as unknown as { Subject: string };
    assert.equal(mail.Subject, 'Hello Mailpit');

    // mailpitSearchEmails(query, start, limit) with qs; mailpitGetEmailsBySubject (`subject:${subject}`, unquoted),
    // mailpitGetEmailsByTo (`to:${email}`); the Has/NotHas waits read messages_count.
    const search = async (query: string) => (await cy('GET', '/api/v1/search', { qs: { query, start: 0, limit: 50 } })).json();
    assert.equal((await search('subject:Hello Mailpit'))['messages_count'], 1);
    assert.equal((await search('to:jane@example.com'))['messages_count'], 1);
    assert.equal((await search('to:bcc@example.com'))['messages_count'], 1, 'to: finds an envelope recipient');
    assert.equal((await search('to:nobody@example.com'))['messages_count'], 0);

    // mailpitGetMailHTMlBody / mailpitGetMailTextBody: `${base}/` + `/view/{ID}.html`, a doubled slash; redirected, as Mailpit's router does.
    for (const [ext, want] of [['html', /<p>hello from mailpit<\/p>/], ['txt', /hello from mailpit/]] as const) {
      const doubled = await cy('GET', `//view/${id}.${ext}`);
      assert.equal(doubled.status, 301, ext);
      assert.equal(doubled.headers.get('location'), `/mailpit/view/${id}.${ext}`);
      const page = await request(server.httpUrl, doubled.headers.get('location')!, { headers: { authorization: basic(ALPHA) } });
      assert.equal(page.status, 200);
      assert.match(page.text, want);
    }
    assert.equal((await request(server.httpUrl, `/mailpit//view/${id}.html`)).status, 401, 'not without the credentials');

    // mailpitGetMailSpamAssassinSummary: GET /api/v1/message/{ID}/sa-check — without SPAM_SCANNER, its Error says so (docs/api.md).
    const sa = await cy('GET', `/api/v1/message/${id}/sa-check`);
    assert.equal(sa.status, 200);
    assert.equal(JSON.parse(sa.text).Error, 'No spam scanner is configured (SPAM_SCANNER).');

    // setReadStatus: PUT /api/v1/messages {IDs, Read}; mailpitSetAllEmailStatusAsRead sends IDs [] (every message).
    assert.equal((await cy('PUT', '/api/v1/messages', { body: { IDs: [], Read: true } })).text, 'ok');
    assert.equal((await client.listMessages()).unread, 0);
    assert.equal((await cy('PUT', '/api/v1/messages', { body: { IDs: [id], Read: false } })).text, 'ok');
    assert.deepEqual((await client.searchMessages({ query: 'is:unread' })).messages.map((m) => m.ID), [id]);
    assert.equal((await cy('PUT', '/api/v1/messages', { body: { IDs: [], Read: false } })).text, 'ok');
    assert.equal((await client.listMessages()).unread, 2);

    // mailpitDeleteEmailsBySearch(query): DELETE /api/v1/search with qs; mailpitDeleteAllEmails: DELETE /api/v1/messages without a body.
    assert.equal((await cy('DELETE', '/api/v1/search', { qs: { query: 'subject:Second' } })).status, 200);
    assert.deepEqual((await client.listMessages()).messages.map((m) => m.ID), [id]);
    assert.equal((await cy('DELETE', '/api/v1/messages')).status, 200);
    assert.equal((await client.listMessages()).total, 0);
  });
});

describe('Mailpit-compatible API: a message without a Message-ID', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedTagsServer();
  });

  it('gets an ID derived from its uuid, as Mailpit generates one, the same in the list and the summary', async () => {
    // A raw message is sent as it is: nodemailer adds no Message-ID to it.
    await smtpSend(server, GAMMA, { envelope: { from: 'a@example.com', to: ['b@example.org'] }, raw: 'From: a@example.com\r\nTo: b@example.org\r\nSubject: no id\r\n\r\nbody\r\n' });
    const client = mailpit(server, GAMMA);
    const [item] = (await client.listMessages()).messages;
    assert.ok(item);
    assert.equal(item.MessageID, `${item.ID}@temp-inbox`);
    assert.equal((await client.getMessageSummary(item.ID)).MessageID, item.MessageID);
    assert.equal((await client.getMessageSummary(item.ID)).MessageID, item.MessageID, 'stable on every read');
  });
});
