// The MailHog-compatible API (docs/api.md "Moving from Mailpit or MailHog") driven by the
// published client mailhog, unchanged, with its options pointed at <server> (basePath
// /mailhog/api, auth the sandbox's name:password); the mail arrives over real SMTP sessions
// with AUTH (nodemailer). Then its routes' errors over raw HTTP, the isolation of two
// sandboxes, a large message reshaped in a worker, and (PostgreSQL) two nodes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mailhog from 'mailhog';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { request, startTestServer, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

const ALPHA = { user: 'alpha', pass: 'alpha-secret-1' };
const BETA = { user: 'beta', pass: 'beta-secret-2' };
const SANDBOXES = `${ALPHA.user}:${ALPHA.pass} ${BETA.user}:${BETA.pass}`;

const basic = (c: { user: string; pass: string }) => `Basic ${Buffer.from(`${c.user}:${c.pass}`).toString('base64')}`;

/** The client as its users make it, for this server. */
function client(server: TestServer, who = ALPHA) {
  const url = new URL(server.httpUrl);
  return mailhog({ host: url.hostname, port: Number(url.port), basePath: '/mailhog/api', auth: `${who.user}:${who.pass}` });
}

async function smtpSend(server: TestServer, who: { user: string; pass: string }, message: SendMailOptions) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, auth: who });
  try {
    return await transport.sendMail(message);
  } finally {
    transport.close();
  }
}

const REPORT = Buffer.from('%PDF-1.4 report');

const rich = (subject: string): SendMailOptions => ({
  from: '"Shop Team" <shop@example.com>',
  to: 'alice@example.org',
  cc: 'carol@example.org',
  subject,
  text: 'Grüße: your order 4711 has shipped.',
  html: '<p>Your order <b>4711</b> has shipped.</p>',
  attachments: [{ filename: 'report.pdf', content: REPORT, contentType: 'application/pdf' }],
});

describe('MailHog-compatible API: the mailhog client, unchanged', () => {
  let server: TestServer;
  let api: ReturnType<typeof mailhog>;
  before(async () => {
    server = await startTestServer({ SANDBOXES });
    api = client(server);
    await smtpSend(server, ALPHA, { from: 'first@example.com', to: 'bob@example.org', subject: 'First one', text: 'plain first' });
    await smtpSend(server, ALPHA, rich('Order shipped'));
  });
  after(async () => server?.close());

  it('lists messages in MailHog\'s shape, which the client decodes', async () => {
    const result = await api.messages();
    assert.ok(result);
    assert.equal(result.total, 2);
    assert.equal(result.count, 2);
    assert.equal(result.start, 0);
    const [newest, oldest] = result.items;
    assert.equal(newest!.subject, 'Order shipped');
    assert.equal(oldest!.subject, 'First one');
    assert.equal(newest!.from, 'Shop Team <shop@example.com>');
    assert.equal(newest!.to, 'alice@example.org');
    assert.equal(newest!.cc, 'carol@example.org');
    assert.ok(newest!.date instanceof Date && !Number.isNaN(newest!.date.getTime()));
    assert.ok(!Number.isNaN(newest!.deliveryDate.getTime()));
    assert.equal(oldest!.text?.trim(), 'plain first');
    // The part's Content-Type header as written, as MailHog gives it.
    assert.deepEqual(
      newest!.attachments.map((a) => [a.name, a.type]),
      [['report.pdf', 'application/pdf; name=report.pdf']],
    );
    assert.deepEqual(Buffer.from(api.decode(newest!.attachments[0]!.Body, newest!.attachments[0]!.encoding), 'binary'), REPORT);

    // The raw shape: paths of the envelope, headers as lists, the MIME tree, the message itself.
    const raw = newest as unknown as {
      ID: string;
      From: { Mailbox: string; Domain: string; Relays: unknown; Params: string };
      To: { Mailbox: string; Domain: string }[];
      Content: { Headers: Record<string, string[]>; Body: string; Size: number };
      MIME: { Parts: { Headers: Record<string, string[]>; MIME: { Parts: { Headers: Record<string, string[]>; Body: string }[] } | null }[] };
      Raw: { From: string; To: string[]; Data: string };
      Created: string;
    };
    assert.deepEqual(raw.From, { Relays: null, Mailbox: 'shop', Domain: 'example.com', Params: '' });
    assert.deepEqual(
      raw.To.map((p) => `${p.Mailbox}@${p.Domain}`),
      ['alice@example.org', 'carol@example.org'],
    );
    assert.deepEqual(raw.Raw.To, ['alice@example.org', 'carol@example.org']);
    assert.equal(raw.Raw.From, 'shop@example.com');
    assert.match(raw.Raw.Data, /\r\nSubject: Order shipped\r\n/);
    assert.match(raw.Content.Headers['Content-Type']![0]!, /^multipart\/mixed; boundary=/);
    assert.ok(raw.Content.Size > raw.Content.Body.length);
    const alternative = raw.MIME.Parts[0]!;
    assert.match(alternative.Headers['Content-Type']![0]!, /^multipart\/alternative/);
    assert.equal(alternative.MIME!.Parts.length, 2);
    assert.match(alternative.MIME!.Parts[1]!.Headers['Content-Type']![0]!, /^text\/html/);
    assert.ok(!Number.isNaN(Date.parse(raw.Created)));

    // v1: the list as a bare array, one message, its source.
    const headers = { authorization: basic(ALPHA) };
    const v1 = await request(server.httpUrl, '/mailhog/api/v1/messages', { headers });
    assert.deepEqual((v1.json as { ID: string }[]).map((m) => m.ID), [raw.ID, oldest!.ID]);
    const one = await request(server.httpUrl, `/mailhog/api/v1/messages/${raw.ID}`, { headers });
    const single = one.json as typeof raw;
    assert.equal(single.ID, raw.ID);
    assert.equal(single.Raw.Data, raw.Raw.Data);
    assert.deepEqual(single.Content.Headers, raw.Content.Headers);
    const eml = await request(server.httpUrl, `/mailhog/api/v1/messages/${raw.ID}/download`, { headers });
    assert.equal(eml.headers.get('content-type'), 'message/rfc822');
    assert.equal(eml.text, raw.Raw.Data);

    const paged = await api.messages(1, 1);
    assert.equal(paged!.count, 1);
    assert.equal(paged!.start, 1);
    assert.equal(paged!.items[0]!.subject, 'First one');
  });

  it('searches from, to and containing, and finds the latest', async () => {
    assert.deepEqual((await api.search('shop@example.com', 'from'))!.items.map((m) => m.subject), ['Order shipped']);
    assert.deepEqual((await api.search('bob@example.org', 'to'))!.items.map((m) => m.subject), ['First one']);
    assert.deepEqual((await api.search('4711'))!.items.map((m) => m.subject), ['Order shipped']);
    assert.equal((await api.search('nothing-like-this'))!.count, 0);
    assert.equal((await api.latestFrom('first@example.com'))!.subject, 'First one');
    assert.equal((await api.latestTo('alice@example.org'))!.subject, 'Order shipped');
    assert.equal((await api.latestContaining('shipped'))!.subject, 'Order shipped');
  });

  it('refuses release: nothing leaves a sandbox', async () => {
    const id = (await api.messages())!.items[0]!.ID;
    await assert.rejects(api.releaseMessage(id, { host: '127.0.0.1', port: '25', email: 'x@example.org' }));
    const res = await request(server.httpUrl, `/mailhog/api/v1/messages/${id}/release`, { method: 'POST', body: '{}', headers: { authorization: basic(ALPHA) } });
    assert.equal(res.status, 403);
    assert.match(res.text, /never relays/);
  });

  it('keeps two sandboxes apart', async () => {
    await smtpSend(server, BETA, { from: 'b@example.com', to: 'c@example.org', subject: 'Beta only', text: 'beta' });
    const beta = client(server, BETA);
    assert.deepEqual((await beta.messages())!.items.map((m) => m.subject), ['Beta only']);
    assert.equal((await beta.search('shipped'))!.count, 0);
    const alphaId = (await api.messages())!.items[0]!.ID;
    for (const method of ['GET', 'DELETE']) {
      const res = await request(server.httpUrl, `/mailhog/api/v1/messages/${alphaId}`, { method, headers: { authorization: basic(BETA) } });
      assert.equal(res.status, 404, method);
    }
    await beta.deleteAll();
    assert.equal((await api.messages())!.total, 2);
  });

  it('deletes one message and all', async () => {
    const items = (await api.messages())!.items;
    const res = await api.deleteMessage(items[0]!.ID);
    assert.equal((res as unknown as { statusCode: number }).statusCode, 200);
    assert.deepEqual((await api.messages())!.items.map((m) => m.ID), [items[1]!.ID]);
    await api.deleteAll();
    assert.equal((await api.messages())!.total, 0);
  });
});

describe('MailHog-compatible API: errors and a large message', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SANDBOXES });
  });
  after(async () => server?.close());
  const call = (method: string, path: string, authorization: string | null = basic(ALPHA)) =>
    request(server.httpUrl, `/mailhog/api${path}`, { method, headers: authorization ? { authorization } : {} });

  it('asks for Basic credentials on every route', async () => {
    for (const [method, path] of [
      ['GET', '/v2/messages'],
      ['GET', '/v2/search?kind=from&query=x'],
      ['GET', '/v1/messages'],
      ['GET', '/v1/messages/x'],
      ['GET', '/v1/messages/x/download'],
      ['DELETE', '/v1/messages'],
      ['DELETE', '/v1/messages/x'],
      ['POST', '/v1/messages/x/release'],
    ] as const) {
      const res = await call(method, path, null);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="mailhog", charset="UTF-8"');
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    }
    assert.equal((await call('GET', '/v2/messages', basic({ user: 'alpha', pass: 'wrong' }))).status, 401);
  });

  it('answers bad input with a plain-text 4xx', async () => {
    const cases: [string, string, number, RegExp][] = [
      ['GET', '/v2/messages?start=x', 400, /start must be a whole number/],
      ['GET', '/v2/messages?limit=-5', 400, /limit must be a whole number/],
      ['GET', '/v2/search?kind=subject&query=x', 400, /kind must be from, to or containing/],
      ['GET', '/v2/search?kind=from', 400, /Give query/],
      ['GET', '/v2/search?kind=containing&query=%22%22', 400, /no letters or digits/],
      ['GET', `/v2/search?kind=containing&query=${encodeURIComponent('one two three four five six seven eight nine')}`, 400, /at most 8 are allowed/],
      ['GET', '/v1/messages/nope', 404, /No such mail/],
      ['DELETE', '/v1/messages/nope', 404, /No such message/],
    ];
    for (const [method, path, status, text] of cases) {
      const res = await call(method, path);
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      assert.match(res.text, text, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, path);
    }
  });

  it('shapes a large message in a worker, the same as a small one', async () => {
    const body = 'line of a large message 0123456789\r\n'.repeat(40_000);
    await smtpSend(server, ALPHA, { from: 'big@example.com', to: 'bob@example.org', subject: 'Large', text: body });
    const result = await client(server).messages();
    const item = result!.items[0]!;
    assert.equal(item.subject, 'Large');
    assert.ok((item as unknown as { Raw: { Data: string } }).Raw.Data.length > 1_000_000);
    assert.equal(item.text?.replace(/\r\n/g, '\n').trim(), body.replace(/\r\n/g, '\n').trim());
  });
});

const skip = skipUnless('postgres', 'redis');

describe('MailHog-compatible API: two nodes on PostgreSQL', { skip }, () => {
  const nodes = twoNodes('mailhog', skip, { SANDBOXES });

  it('shows mail sent to one node on the other, each sandbox only its own', async () => {
    await smtpSend(nodes.a, ALPHA, rich('Across nodes'));
    const onB = client(nodes.b);
    const result = await onB.messages();
    assert.deepEqual(result!.items.map((m) => m.subject), ['Across nodes']);
    assert.equal((await onB.latestContaining('4711'))!.subject, 'Across nodes');
    assert.equal((await client(nodes.a, BETA).messages())!.total, 0);
    const id = result!.items[0]!.ID;
    assert.equal((await request(nodes.a.httpUrl, `/mailhog/api/v1/messages/${id}`, { method: 'DELETE', headers: { authorization: basic(BETA) } })).status, 404);
    await client(nodes.a).deleteMessage(id);
    assert.equal((await onB.messages())!.total, 0);
  });
});

// cypress-mailhog 2.5.0 (index.js), each call as the plugin makes it: mhApiUrl(path) is
// new URL(`api${path}`, mailHogUrl), so its mailHogUrl is <server>/mailhog/.
describe("MailHog-compatible API: cypress-mailhog's calls", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SANDBOXES });
  });
  after(async () => server?.close());

  const cy = async (method: string, path: string) => {
    const url = new URL(`api${path}`, `${server.httpUrl}/mailhog/`);
    return request(server.httpUrl, url.pathname + url.search, { method, headers: { authorization: basic(ALPHA) } });
  };
  type Item = { To: { Mailbox: string; Domain: string }[]; Raw: { From: string }; Content: { Headers: Record<string, string[]>; Body: string }; MIME: { Parts: { Headers: Record<string, string[]> }[] } | null };

  it('serves every call with the fields the commands read', async () => {
    await smtpSend(server, ALPHA, { ...rich('Order shipped'), bcc: 'hidden@example.net', envelope: { from: 'bounce@shop.example', to: ['alice@example.org', 'carol@example.org', 'hidden@example.net'] } });
    await smtpSend(server, ALPHA, { from: 'first@example.com', to: 'bob@example.org', subject: 'First one', text: 'plain first' });

    // getMessages(limit): GET /api/v2/messages?limit=50, then .items; mhGetMailsBySubject reads Content.Headers.Subject[0],
    // mhGetMailsByRecipient To[].Mailbox@Domain, mhGetMailsBySender Raw.From, mhGetBody Content.Body.
    const page = await cy('GET', `/v2/messages?limit=${encodeURIComponent(50)}`);
    assert.equal(page.status, 200);
    const items = page.json.items as Item[];
    assert.deepEqual(items.map((m) => m.Content.Headers['Subject']![0]), ['First one', 'Order shipped']);
    const order = items[1]!;
    assert.deepEqual(order.To.map((r) => `${r.Mailbox}@${r.Domain}`), ['alice@example.org', 'carol@example.org', 'hidden@example.net']);
    assert.equal(order.Raw.From, 'bounce@shop.example');
    assert.match(items[0]!.Content.Body, /plain first/);

    // mhGetAttachments: the top-level MIME.Parts, each part's Content-Disposition[0] split at ";", its filename= token.
    const attachments: string[] = [];
    for (const part of order.MIME?.Parts ?? []) {
      const disposition = part.Headers['Content-Disposition']?.[0];
      if (!disposition) continue;
      const tokens = disposition.split(';').map((t) => t.trim());
      if (tokens.includes('attachment')) attachments.push(tokens.find((t) => t.startsWith('filename='))!.replace('filename=', ''));
    }
    assert.deepEqual(attachments, ['report.pdf']);

    // searchMessages(kind, query, limit): GET /api/v2/search?kind=&query=&limit=, then .items; kind=to also finds the envelope's Bcc.
    const search = async (kind: string, query: string) =>
      ((await cy('GET', `/v2/search?kind=${encodeURIComponent(kind)}&query=${encodeURIComponent(query)}&limit=${encodeURIComponent(50)}`)).json.items as Item[]).map((m) => m.Content.Headers['Subject']![0]);
    assert.deepEqual(await search('to', 'hidden@example.net'), ['Order shipped']);
    assert.deepEqual(await search('from', 'first@example.com'), ['First one']);
    assert.deepEqual(await search('containing', 'shipped'), ['Order shipped']);

    // mhGetJimMode: GET /api/v2/jim, on when 200 (off here: 404); mhSetJimMode: POST (refused) or DELETE (a no-op), failOnStatusCode false.
    assert.equal((await cy('GET', '/v2/jim')).status, 404);
    const on = await cy('POST', '/v2/jim');
    assert.equal(on.status, 400);
    assert.match(on.text, /Jim is not available/);
    assert.equal((await cy('DELETE', '/v2/jim')).status, 200);
    assert.equal((await request(server.httpUrl, '/mailhog/api/v2/jim')).status, 401, 'not without the credentials');

    // mhDeleteAll: DELETE /api/v1/messages.
    assert.equal((await cy('DELETE', '/v1/messages')).status, 200);
    assert.deepEqual((await cy('GET', '/v2/messages?limit=50')).json.items, []);
  });
});
