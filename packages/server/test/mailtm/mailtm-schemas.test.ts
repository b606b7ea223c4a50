// The mail.tm-compatible API writes what @temp-inbox/api's mail.tm schemas say (packages/api/src/mailtm.ts):
// every answer of a real server, in JSON-LD and in plain JSON, with real mail delivered over SMTP
// (one large enough that its source is streamed and its message reshaped off the event loop),
// checked against its schema, no field missing, none undeclared; the event stream's updates too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  MailtmAccount,
  MailtmAccountLd,
  MailtmDeletedAccountLd,
  MailtmDeletedMessageLd,
  MailtmDomain,
  MailtmDomainCollection,
  MailtmDomainLd,
  MailtmDomains,
  MailtmHydraError,
  MailtmMessage,
  MailtmMessageCollection,
  MailtmMessageItemLd,
  MailtmMessageItems,
  MailtmMessageLd,
  MailtmProblem,
  MailtmSource,
  MailtmSourceLd,
  MailtmToken,
  MailtmUnauthorized,
  MailtmViolationList,
  MailtmViolationListLd,
} from '@temp-inbox/api';
import { openEventStream } from '../helpers/event-stream.js';
import { DOMAIN, request, sendMail, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';

// TypeBox checks a format only once told what it is: mail.tm's timestamps, to the second with an offset.
FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)));

const JWT_SECRET = randomBytes(32).toString('hex');
const LD = 'application/ld+json';
const JSON_TYPE = 'application/json';

/** Fields of `value` that the schema's objects do not declare (TypeBox allows them unless told). */
function undeclared(schema: TSchema, value: unknown, at = '$'): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return schema['items'] ? value.flatMap((v, i) => undeclared(schema['items'] as TSchema, v, `${at}[${i}]`)) : [];
  const props = schema['properties'] as Record<string, TSchema> | undefined;
  if (!props) return [];
  return Object.entries(value).flatMap(([k, v]) => (props[k] ? undeclared(props[k], v, `${at}.${k}`) : [`${at}.${k}`]));
}

function assertFits(schema: TSchema, res: HttpResult, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.text.slice(0, 500)}`);
  const body: unknown = JSON.parse(res.text);
  const errors = [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(errors, [], `${what} does not fit its schema`);
  assert.deepEqual(undeclared(schema, body), [], `${what} has fields its schema lacks`);
}

/** A message with a Cc, text, HTML, an inline image and an attachment; `pad` bytes more of text. */
function richMessage(to: string, subject: string, pad = 0): string {
  const text = `Your code is 123456.\r\n${'x'.repeat(76).concat('\r\n').repeat(Math.ceil(pad / 78))}`;
  return [
    'From: Sender <sender@example.com>',
    `To: Someone <${to}>`,
    'Cc: other@example.org',
    `Subject: ${subject}`,
    'Message-ID: <schemas.1@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="mixed"',
    '',
    '--mixed',
    'Content-Type: multipart/related; boundary="related"',
    '',
    '--related',
    'Content-Type: multipart/alternative; boundary="alt"',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your code is <b>123456</b> <img src="cid:logo@example.com"></p>',
    '--alt--',
    '--related',
    'Content-Type: image/png',
    'Content-ID: <logo@example.com>',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('not really a png').toString('base64'),
    '--related--',
    '--mixed',
    'Content-Type: text/plain; name="a.txt"',
    'Content-Disposition: attachment; filename="a.txt"',
    '',
    'attached',
    '--mixed--',
    '',
  ].join('\r\n');
}

describe('mail.tm answer schemas: what /mailtm writes is what @temp-inbox/api declares', { timeout: 120_000 }, () => {
  let server: TestServer;
  let token: string;
  let accountId: string;
  let address: string;
  const api = (path: string, opts: { accept?: string; method?: string; body?: unknown; token?: string | null; contentType?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.accept) headers['accept'] = opts.accept;
    const bearer = opts.token === undefined ? token : opts.token;
    if (bearer) headers['authorization'] = `Bearer ${bearer}`;
    if (opts.contentType) headers['content-type'] = opts.contentType;
    return request(server.httpUrl, `/mailtm${path}`, { headers, ...(opts.method ? { method: opts.method } : {}), ...(opts.body === undefined ? {} : { body: opts.body }) });
  };
  const both = async (path: string, ld: TSchema, plain: TSchema, status = 200) => {
    assertFits(ld, await api(path, { accept: LD }), status, `${path} (JSON-LD)`);
    assertFits(plain, await api(path, { accept: JSON_TYPE }), status, `${path} (JSON)`);
  };
  const firstMessage = async () => (JSON.parse((await api('/messages', { accept: JSON_TYPE })).text) as { id: string; subject: string }[]).find((m) => m.subject === 'rich')!.id;

  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: DOMAIN, JWT_SECRET });
    address = `schemas@${DOMAIN}`;
    const created = await api('/accounts', { method: 'POST', body: { address, password: 'pw-schemas' }, accept: LD, token: null });
    assertFits(MailtmAccountLd, created, 201, 'POST /accounts (JSON-LD)');
    accountId = (JSON.parse(created.text) as { id: string }).id;
    assertFits(MailtmAccount, await api('/accounts', { method: 'POST', body: { address: `plain@${DOMAIN}`, password: 'pw-plain' }, accept: JSON_TYPE, token: null }), 201, 'POST /accounts (JSON)');
    const login = await api('/token', { method: 'POST', body: { address, password: 'pw-schemas' }, token: null });
    assertFits(MailtmToken, login, 200, 'POST /token');
    token = (JSON.parse(login.text) as { token: string }).token;
    // 31 mails: two pages of the message collection, the rich and the large one newest (on the first).
    for (let i = 0; i < 29; i++) {
      assert.equal((await sendMail(server.smtpPort, { to: [address], message: `From: s@example.org\r\nTo: ${address}\r\nSubject: small ${i}\r\n\r\nHello ${i}.\r\n` })).code, 250);
    }
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: richMessage(address, 'rich') })).code, 250);
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: richMessage(address, 'large', 600 * 1024) })).code, 250);
  });
  after(async () => server?.close());

  it('domains: the collection (with and without a page asked for) and one domain', async () => {
    await both('/domains', MailtmDomainCollection, MailtmDomains);
    assertFits(MailtmDomainCollection, await api('/domains?page=1', { accept: LD }), 200, '/domains?page=1');
    const [d] = JSON.parse((await api('/domains', { accept: JSON_TYPE })).text) as { id: string }[];
    await both(`/domains/${d!.id}`, MailtmDomainLd, MailtmDomain);
  });

  it('accounts: GET /me and GET /accounts/{id}', async () => {
    await both('/me', MailtmAccountLd, MailtmAccount);
    await both(`/accounts/${accountId}`, MailtmAccountLd, MailtmAccount);
  });

  it('messages: both pages of the collection, with every link of their views', async () => {
    await both('/messages', MailtmMessageCollection, MailtmMessageItems);
    for (const page of [1, 2]) {
      const res = await api(`/messages?page=${page}`, { accept: LD });
      assertFits(MailtmMessageCollection, res, 200, `/messages?page=${page}`);
      const view = (JSON.parse(res.text) as { 'hydra:view': Record<string, string> })['hydra:view'];
      assert.ok(view[page === 1 ? 'hydra:next' : 'hydra:previous'], `page ${page} links its neighbour`);
    }
    assertFits(MailtmMessageItems, await api('/messages?page=2', { accept: JSON_TYPE }), 200, '/messages?page=2 (JSON)');
  });

  it('a message, its source and a PATCH, for an ordinary and a large message', async () => {
    const list = JSON.parse((await api('/messages', { accept: JSON_TYPE })).text) as { id: string; subject: string }[];
    for (const subject of ['rich', 'large']) {
      const id = list.find((m) => m.subject === subject)!.id;
      await both(`/messages/${id}`, MailtmMessageLd, MailtmMessage);
      await both(`/sources/${id}`, MailtmSourceLd, MailtmSource);
    }
    const rich = JSON.parse((await api(`/messages/${await firstMessage()}`, { accept: JSON_TYPE })).text) as { attachments: { disposition: string }[]; html: string[]; cc: string[] };
    assert.deepEqual(rich.attachments.map((a) => a.disposition).sort(), ['attachment', 'inline'], 'both kinds of attachment were checked');
    assert.equal(rich.html.length, 1);
    assert.deepEqual(rich.cc, ['other@example.org']);
    const patched = await api(`/messages/${await firstMessage()}`, { method: 'PATCH', body: { seen: true }, accept: LD, contentType: 'application/merge-patch+json' });
    assertFits(MailtmMessageItemLd, patched, 200, 'PATCH /messages/{id}');
  });

  it('errors: not found, a bad page, violations, and the 401s', async () => {
    assertFits(MailtmHydraError, await api('/messages/00000000-0000-4000-8000-000000000000', { accept: LD }), 404, 'a missing message (JSON-LD)');
    assertFits(MailtmProblem, await api('/messages/00000000-0000-4000-8000-000000000000', { accept: JSON_TYPE }), 404, 'a missing message (JSON)');
    assertFits(MailtmHydraError, await api('/messages?page=0', { accept: LD }), 400, 'page 0');
    const bad = { method: 'POST', body: { address: 'not an address', password: '' }, token: null };
    assertFits(MailtmViolationListLd, await api('/accounts', { ...bad, accept: LD }), 422, 'POST /accounts refused (JSON-LD)');
    assertFits(MailtmViolationList, await api('/accounts', { ...bad, accept: JSON_TYPE }), 422, 'POST /accounts refused (JSON)');
    const taken = await api('/accounts', { method: 'POST', body: { address, password: 'pw' }, accept: JSON_TYPE, token: null });
    assertFits(MailtmViolationList, taken, 422, 'an address already used');
    assert.ok((JSON.parse(taken.text) as { violations: { code?: string }[] }).violations[0]!.code, 'a violation with its code was checked');
    assertFits(MailtmUnauthorized, await api('/me', { token: null }), 401, 'no token');
    assertFits(MailtmUnauthorized, await api('/me', { token: 'a.b.c' }), 401, 'a bad token');
    assertFits(MailtmUnauthorized, await api('/token', { method: 'POST', body: { address, password: 'wrong' }, token: null }), 401, 'wrong password');
  });

  it("the event stream's updates: a message arrives, is read, is deleted; the account is deleted", async () => {
    const own = `schemas-events@${DOMAIN}`;
    const made = JSON.parse((await api('/accounts', { method: 'POST', body: { address: own, password: 'pw-events' }, accept: JSON_TYPE, token: null })).text) as { id: string };
    const login = JSON.parse((await api('/token', { method: 'POST', body: { address: own, password: 'pw-events' }, token: null })).text) as { token: string };
    const stream = await openEventStream(server.httpUrl, `/mailtm/.well-known/mercure?topic=${encodeURIComponent(`/accounts/${made.id}`)}`, { authorization: `Bearer ${login.token}` });
    const fits = async (schema: TSchema, what: string) => {
      const data: unknown = JSON.parse((await stream.next('message')).data);
      assert.deepEqual([...Value.Errors(schema, data)].map((e) => `${e.path}: ${e.message}`), [], `${what} does not fit its schema`);
      assert.deepEqual(undeclared(schema, data), [], `${what} has fields its schema lacks`);
      return data as { id: string };
    };
    try {
      assert.equal(stream.status, 200);
      assert.equal((await sendMail(server.smtpPort, { to: [own], message: richMessage(own, 'pushed') })).code, 250);
      const arrived = await fits(MailtmMessageItemLd, 'a new message');
      assert.equal((await api(`/messages/${arrived.id}`, { method: 'PATCH', body: { seen: true }, token: login.token, contentType: 'application/merge-patch+json' })).status, 200);
      await fits(MailtmMessageItemLd, 'a message marked read');
      assert.equal((await api(`/messages/${arrived.id}`, { method: 'DELETE', token: login.token })).status, 204);
      await fits(MailtmDeletedMessageLd, 'a deleted message');
      assert.equal((await api(`/accounts/${made.id}`, { method: 'DELETE', token: login.token })).status, 204);
      await fits(MailtmDeletedAccountLd, 'the deleted account');
      await stream.ended;
    } finally {
      stream.close();
    }
  });
});
