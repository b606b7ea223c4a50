// The mail.tm-compatible API over plain HTTP (docs/api.md "mail.tm-compatible API"):
// content negotiation (JSON-LD with Hydra collections, or plain JSON), mail.tm's error
// bodies and statuses, isolation between accounts, bad input, the rate limits of /token
// and /accounts, the bot check, MAILTM_API=off, passwords stored as scrypt hashes, and an
// account's token on our own API and in the web UI's session. Real SMTP, HTTP, SQLite.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { openEventStream } from '../helpers/event-stream.js';
import { CookieJar, createAddress, DOMAIN, message, request, sendMail, startTestServer, type HttpResult, type RequestOptions, type TestServer } from '../helpers/harness.js';
import { solvedToken } from '../helpers/pow.js';

const LD = 'application/ld+json; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const JWT_SECRET = randomBytes(32).toString('hex');

type Api = (path: string, opts?: RequestOptions & { accept?: string; token?: string }) => Promise<HttpResult>;

function apiOf(server: TestServer): Api {
  return (path, opts = {}) => {
    const { accept, token, ...rest } = opts;
    const headers: Record<string, string> = { ...rest.headers };
    if (accept !== undefined) headers['accept'] = accept;
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    return request(server.httpUrl, `/mailtm${path}`, { ...rest, headers });
  };
}

/** Registers and logs in; returns the account, its token and its password. */
async function account(api: Api, name: string, password = `pw-${name}`, opts: RequestOptions = {}) {
  const address = `${name}@${DOMAIN}`;
  const created = await api('/accounts', { method: 'POST', body: { address, password }, accept: 'application/json', ...opts });
  assert.equal(created.status, 201, created.text);
  const login = await api('/token', { method: 'POST', body: { address, password }, ...opts });
  assert.equal(login.status, 200, login.text);
  return { id: created.json.id as string, address, password, token: login.json.token as string };
}

async function deliver(server: TestServer, to: string, subject: string, body = 'Hello.'): Promise<void> {
  await sendMail(server.smtpPort, { to: [to], message: message({ From: 'Sender <s@example.org>', To: to, Subject: subject }, body) });
}

function assertHydraError(res: HttpResult, status: number, description: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type'), LD);
  assert.deepEqual(res.json, { '@context': '/contexts/Error', '@type': 'hydra:Error', 'hydra:title': 'An error occurred', 'hydra:description': description });
}

function assertJwtError(res: HttpResult, message: string): void {
  assert.equal(res.status, 401, res.text);
  assert.equal(res.headers.get('content-type'), JSON_TYPE);
  assert.deepEqual(res.json, { code: 401, message });
}

describe('mail.tm-compatible API over HTTP', { timeout: 120_000 }, () => {
  let server: TestServer;
  let api: Api;
  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: DOMAIN, JWT_SECRET });
    api = apiOf(server);
  });
  after(async () => {
    await server.close();
  });

  describe('content negotiation', () => {
    it('no Accept, */* or application/ld+json: JSON-LD, a Hydra collection with @id and @type on each member', async () => {
      for (const accept of [undefined, '*/*', 'application/ld+json', 'text/html, */*;q=0.8']) {
        const res = await api('/domains', accept === undefined ? {} : { accept });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('content-type'), LD, String(accept));
        assert.equal(res.json['@context'], '/contexts/Domain');
        assert.equal(res.json['@id'], '/domains');
        assert.equal(res.json['@type'], 'hydra:Collection');
        assert.equal(res.json['hydra:totalItems'], 1);
        assert.equal(res.json['hydra:view'], undefined, 'one page, none asked for: no view');
        const [d] = res.json['hydra:member'];
        assert.deepEqual(Object.keys(d), ['@id', '@type', 'id', 'domain', 'isActive', 'isPrivate', 'createdAt', 'updatedAt']);
        assert.equal(d['@id'], `/domains/${d.id}`);
        assert.equal(d['@type'], 'Domain');
        assert.equal(d.domain, DOMAIN);
        assert.equal(d.isActive, true);
        assert.equal(d.isPrivate, false);
      }
    });

    it('application/json (also first among equals, or of higher quality): plain arrays and objects', async () => {
      for (const accept of ['application/json', 'application/json, text/plain, */*', 'application/ld+json;q=0.5, application/json']) {
        const res = await api('/domains', { accept });
        assert.equal(res.headers.get('content-type'), JSON_TYPE, accept);
        assert.ok(Array.isArray(res.json), accept);
        assert.deepEqual(Object.keys(res.json[0]), ['id', 'domain', 'isActive', 'isPrivate', 'createdAt', 'updatedAt']);
      }
      const [d] = (await api('/domains', { accept: 'application/json' })).json;
      const one = await api(`/domains/${d.id}`, { accept: 'application/json' });
      assert.deepEqual(one.json, d);
      const ld = await api(`/domains/${d.id}`);
      assert.deepEqual(ld.json, { '@context': '/contexts/Domain', '@id': `/domains/${d.id}`, '@type': 'Domain', ...d });
    });

    it('accounts, messages and sources in both forms; messages page by 30 with hydra:view', async () => {
      const a = await account(api, 'negotiate');
      const meLd = await api('/me', { token: a.token });
      assert.equal(meLd.headers.get('content-type'), LD);
      assert.deepEqual(Object.keys(meLd.json), ['@context', '@id', '@type', 'id', 'address', 'quota', 'used', 'isDisabled', 'isDeleted', 'createdAt', 'updatedAt']);
      assert.equal(meLd.json['@context'], '/contexts/Account');
      assert.equal(meLd.json['@id'], `/accounts/${a.id}`);
      assert.equal(meLd.json['@type'], 'Account');
      assert.equal(meLd.json.quota, 104857600, 'ADDRESS_MAX_BYTES');

      for (let i = 1; i <= 31; i++) await deliver(server, a.address, `mail ${i}`);
      const first = await api('/messages', { token: a.token });
      assert.equal(first.headers.get('content-type'), LD);
      assert.equal(first.json['@context'], '/contexts/Message');
      assert.equal(first.json['@id'], '/messages');
      assert.equal(first.json['hydra:totalItems'], 31);
      assert.equal(first.json['hydra:member'].length, 30);
      assert.deepEqual(first.json['hydra:view'], {
        '@id': '/messages?page=1',
        '@type': 'hydra:PartialCollectionView',
        'hydra:first': '/messages?page=1',
        'hydra:last': '/messages?page=2',
        'hydra:next': '/messages?page=2',
      });
      const m = first.json['hydra:member'][0];
      assert.equal(m['@id'], `/messages/${m.id}`);
      assert.equal(m['@type'], 'Message');
      assert.equal(m.subject, 'mail 31');
      const second = await api('/messages?page=2', { token: a.token });
      assert.equal(second.json['hydra:member'].length, 1);
      assert.equal(second.json['hydra:view']['hydra:previous'], '/messages?page=1');
      assert.equal(second.json['hydra:view']['hydra:next'], undefined);
      const plain = await api('/messages?page=2', { token: a.token, accept: 'application/json' });
      assert.equal(plain.json.length, 1);
      assert.equal(plain.json[0].subject, 'mail 1');
      assert.equal(plain.json[0]['@id'], undefined);

      const one = await api(`/messages/${m.id}`, { token: a.token });
      assert.equal(one.headers.get('content-type'), LD);
      assert.equal(one.json['@context'], '/contexts/Message');
      assert.equal(one.json['@id'], `/messages/${m.id}`);
      assert.equal(one.json['@type'], 'Message');
      assert.deepEqual(Object.keys(one.json).slice(3), [
        'id',
        'accountId',
        'msgid',
        'from',
        'to',
        'cc',
        'bcc',
        'subject',
        'seen',
        'flagged',
        'isDeleted',
        'verifications',
        'retention',
        'retentionDate',
        'text',
        'html',
        'hasAttachments',
        'attachments',
        'size',
        'downloadUrl',
        'createdAt',
        'updatedAt',
      ]);
      const src = await api(`/sources/${m.id}`, { token: a.token });
      assert.deepEqual(Object.keys(src.json), ['@context', '@id', '@type', 'id', 'downloadUrl', 'data']);
      assert.equal(src.json['@type'], 'Source');
      assert.equal(src.json['@id'], `/sources/${m.id}`);
      assert.equal(src.json.downloadUrl, `/messages/${m.id}/download`);
    });

    it('a message larger than the inline bound is reshaped off the event loop and answered whole', async () => {
      const a = await account(api, 'large-one');
      const text = Array.from({ length: 12_000 }, (_, i) => `line ${i} of a long message, with enough words to fill it.`).join('\r\n');
      await deliver(server, a.address, 'a long one', text);
      const [m] = (await api('/messages', { token: a.token, accept: 'application/json' })).json;
      const one = await api(`/messages/${m.id}`, { token: a.token, accept: 'application/json' });
      assert.equal(one.status, 200, one.text.slice(0, 200));
      assert.equal(one.json.subject, 'a long one');
      assert.equal(one.json.text.replace(/\r?\n/g, '\n').trim(), text.replace(/\r\n/g, '\n'));
    });
  });

  describe("mail.tm's error bodies and statuses", () => {
    it('401 without, with a malformed, a forged or an expired token: {code, message} as JSON whatever the Accept', async () => {
      const a = await account(api, 'tokens');
      assertJwtError(await api('/me'), 'JWT Token not found');
      assertJwtError(await api('/me', { headers: { authorization: 'Basic abc' } }), 'JWT Token not found');
      assertJwtError(await api('/messages', { token: 'not-a-jwt' }), 'Invalid JWT Token');
      assertJwtError(await api('/messages', { token: `${a.token.slice(0, -4)}AAAA`, accept: 'application/ld+json' }), 'Invalid JWT Token');
      const key = new TextEncoder().encode(JWT_SECRET);
      const iat = Math.floor(Date.now() / 1000) - 8 * 86_400;
      const expired = await new SignJWT({ aid: 1 }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(a.address).setIssuedAt(iat).setExpirationTime(iat + 7 * 86_400).sign(key);
      assertJwtError(await api('/me', { token: expired }), 'Expired JWT Token');
    });

    it('404 as a hydra:Error (JSON-LD) or a problem document (JSON): unknown message, domain, path', async () => {
      const a = await account(api, 'not-found');
      assertHydraError(await api(`/messages/${randomUUID()}`, { token: a.token }), 404, 'Not Found');
      assertHydraError(await api('/messages/not-a-uuid', { token: a.token }), 404, 'Not Found');
      assertHydraError(await api('/domains/000000000000000000000000'), 404, 'Not Found');
      assertHydraError(await api('/nothing/here'), 404, 'Not Found');
      const plain = await api(`/messages/${randomUUID()}`, { token: a.token, accept: 'application/json' });
      assert.equal(plain.status, 404);
      assert.equal(plain.headers.get('content-type'), JSON_TYPE);
      assert.deepEqual(plain.json, { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', detail: 'Not Found' });
      assertHydraError(await api('/messages?page=0', { token: a.token }), 400, 'Page should not be less than 1');
      assertHydraError(await api('/messages?page=x', { token: a.token }), 400, 'Page should not be less than 1');
    });

    it('POST /accounts: 422 with the violations of a bad address or password, nothing created', async () => {
      const violations = async (body: unknown) => {
        const res = await api('/accounts', { method: 'POST', body });
        assert.equal(res.status, 422, res.text);
        assert.equal(res.headers.get('content-type'), LD);
        assert.equal(res.json['@type'], 'ConstraintViolationList');
        assert.equal(res.json['hydra:title'], 'An error occurred');
        return res.json.violations as { propertyPath: string; message: string; code?: string }[];
      };
      assert.deepEqual(
        (await violations({})).map((v) => [v.propertyPath, v.message]),
        [
          ['address', 'This value should not be blank.'],
          ['password', 'This value should not be blank.'],
        ],
      );
      assert.deepEqual(await violations({ address: 'no-at-sign', password: 'x' }), [
        { propertyPath: 'address', message: 'This value is not a valid email address.', code: 'bd79c0ab-ddba-46cc-a703-a7a4b08de310' },
      ]);
      assert.match((await violations({ address: 'someone@elsewhere.example', password: 'x' }))[0]!.message, /domain "elsewhere\.example" is not valid/);
      assert.match((await violations({ address: `admin@${DOMAIN}`, password: 'x' }))[0]!.message, /reserved/);
      assert.match((await violations({ address: `-bad-@${DOMAIN}`, password: 'x' }))[0]!.message, /Invalid name/);
      assert.deepEqual(
        (await violations({ address: `long-pw@${DOMAIN}`, password: 'x'.repeat(1025) })).map((v) => v.propertyPath),
        ['password'],
      );
      assert.deepEqual(
        (await violations({ address: 5, password: ['x'] })).map((v) => v.propertyPath),
        ['address', 'password'],
      );
      await account(api, 'taken');
      assert.deepEqual(await violations({ address: `TAKEN@${DOMAIN}`, password: 'other' }), [
        { propertyPath: 'address', message: 'This value is already used.', code: '23bd9dbf-6b9b-41cd-a99e-4844bcf3077f' },
      ]);
      const plain = await api('/accounts', { method: 'POST', body: {}, accept: 'application/json' });
      assert.equal(plain.headers.get('content-type'), JSON_TYPE);
      assert.equal(plain.json.detail, 'address: This value should not be blank.\npassword: This value should not be blank.');
      assert.equal(plain.json.violations.length, 2);
      for (const name of ['long-pw', '-bad-', 'admin']) {
        assert.equal((await api('/token', { method: 'POST', body: { address: `${name}@${DOMAIN}`, password: 'x' } })).status, 401, `${name} was not created`);
      }
    });

    it('a body that is not a JSON object is 400 "Syntax error"; another media type 415', async () => {
      for (const body of ['{"address": ', '[]', '"text"', 'null']) {
        assertHydraError(await api('/accounts', { method: 'POST', body }), 400, 'Syntax error');
      }
      assertHydraError(await api('/accounts', { method: 'POST', body: '', headers: { 'content-type': 'application/json' } }), 400, 'Syntax error');
      for (const [type, body] of [['application/xml', '<a/>'], ['text/plain', '{"address":"x"}']]) {
        const other = await api('/accounts', { method: 'POST', body, headers: { 'content-type': type! } });
        assert.equal(other.status, 415, type);
        assert.equal(other.json['@type'], 'hydra:Error');
        assert.match(other.json['hydra:description'], new RegExp(`"${type}" is not supported`));
      }
      const huge = await api('/accounts', { method: 'POST', body: { address: `big@${DOMAIN}`, password: 'x'.repeat(70_000) } });
      assert.equal(huge.status, 413);
      assert.equal(huge.json['@type'], 'hydra:Error');
    });

    it('Content-Type: application/json on a request without a body (as many clients send on every request) is no body', async () => {
      const a = await account(api, 'typed-delete');
      await deliver(server, a.address, 'delete me');
      const [m] = (await api('/messages', { token: a.token, accept: 'application/json', headers: { 'content-type': 'application/json' } })).json;
      const json = { 'content-type': 'application/json', 'content-length': '0' };
      assert.equal((await api(`/messages/${m.id}`, { method: 'DELETE', token: a.token, headers: json })).status, 204);
      assert.equal((await api(`/accounts/${a.id}`, { method: 'DELETE', token: a.token, headers: json })).status, 204);
      assertHydraError(await api('/token', { method: 'POST', headers: json }), 400, 'Syntax error');
    });

    it('POST /token: 401 "Invalid credentials." for a wrong password, an unknown address or a bad body, alike', async () => {
      const a = await account(api, 'login');
      for (const body of [
        { address: a.address, password: 'wrong' },
        { address: `nobody@${DOMAIN}`, password: a.password },
        { address: a.address },
        { address: 5, password: a.password },
        { address: a.address, password: 'x'.repeat(5000) },
      ]) {
        assertJwtError(await api('/token', { method: 'POST', body }), 'Invalid credentials.');
      }
      const upper = await api('/token', { method: 'POST', body: { address: a.address.toUpperCase(), password: a.password } });
      assert.equal(upper.status, 200, 'the address is case-insensitive');
      assert.deepEqual(Object.keys(upper.json), ['token', '@id', 'id']);
      assert.equal(upper.json['@id'], `/accounts/${a.id}`);
    });

    it('PATCH /messages/{id}: seen must be a boolean (400); merge-patch+json and JSON are both taken; no seen changes nothing', async () => {
      const a = await account(api, 'patcher');
      await deliver(server, a.address, 'patch me');
      const [m] = (await api('/messages', { token: a.token, accept: 'application/json' })).json;
      const patch = (body: string, type = 'application/merge-patch+json') => api(`/messages/${m.id}`, { method: 'PATCH', token: a.token, body, headers: { 'content-type': type } });
      assertHydraError(await patch('{"seen": "yes"}'), 400, 'The type of the "seen" attribute must be "bool", "string" given.');
      assertHydraError(await patch('{"seen": null}'), 400, 'The type of the "seen" attribute must be "bool", "null" given.');
      assertHydraError(await patch('[true]'), 400, 'Syntax error');
      const unchanged = await patch('{}');
      assert.equal(unchanged.status, 200, unchanged.text);
      assert.equal(unchanged.json.seen, false);
      assert.equal((await patch('{"seen": true}')).json.seen, true);
      assert.equal((await patch('{"seen": false}', 'application/json')).json.seen, false);
      assert.equal((await patch('{"seen": true}', 'application/ld+json')).json.seen, true);
    });
  });

  describe('isolation between accounts', () => {
    it("account B can neither read, mark, delete nor download A's messages, nor read or delete A's account", async () => {
      const a = await account(api, 'iso-a');
      const b = await account(api, 'iso-b');
      await sendMail(server.smtpPort, {
        to: [a.address],
        message: message(
          { Subject: 'for a only', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="b"' },
          `--b\r\nContent-Type: text/plain\r\n\r\nsecret\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="f.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from('bytes').toString('base64')}\r\n--b--\r\n`,
        ),
      });
      const [m] = (await api('/messages', { token: a.token, accept: 'application/json' })).json;
      assert.deepEqual((await api('/messages', { token: b.token, accept: 'application/json' })).json, [], "B lists none of A's");
      for (const [method, path] of [
        ['GET', `/messages/${m.id}`],
        ['PATCH', `/messages/${m.id}`],
        ['DELETE', `/messages/${m.id}`],
        ['GET', `/sources/${m.id}`],
        ['GET', `/messages/${m.id}/download`],
        ['GET', `/messages/${m.id}/attachment/ATTACH000001`],
        ['GET', `/accounts/${a.id}`],
        ['DELETE', `/accounts/${a.id}`],
      ] as const) {
        const res = await api(path, { method, token: b.token, ...(method === 'PATCH' ? { body: { seen: true }, headers: { 'content-type': 'application/merge-patch+json' } } : {}) });
        assertHydraError(res, 404, 'Not Found');
      }
      const still = await api(`/messages/${m.id}`, { token: a.token, accept: 'application/json' });
      assert.equal(still.status, 200);
      assert.equal(still.json.seen, false, 'not marked by B');
      assert.equal((await api(`/accounts/${a.id}`, { token: a.token })).status, 200, 'A still exists');
      assert.equal((await api(`/messages/${m.id}/attachment/ATTACH000001`, { token: a.token })).status, 200);
      assertHydraError(await api(`/messages/${m.id}/attachment/ATTACH000002`, { token: a.token }), 404, 'Not Found');
      assertHydraError(await api(`/messages/${m.id}/attachment/0`, { token: a.token }), 404, 'Not Found');
    });

    it("the Mercure stream: 400 without a topic, 401 without a token, 403 for another account's topic", async () => {
      const a = await account(api, 'mercure-a');
      const b = await account(api, 'mercure-b');
      const path = (topic: string) => `/mailtm/.well-known/mercure?topic=${encodeURIComponent(topic)}`;
      const noTopic = await request(server.httpUrl, '/mailtm/.well-known/mercure', { headers: { authorization: `Bearer ${a.token}` } });
      assertHydraError(noTopic, 400, 'Missing "topic" parameter.');
      assertJwtError(await request(server.httpUrl, path(`/accounts/${a.id}`)), 'JWT Token not found');
      assertHydraError(await request(server.httpUrl, path(`/accounts/${a.id}`), { headers: { authorization: `Bearer ${b.token}` } }), 403, 'Access Denied.');
      // Never from the URL (access logs keep URLs).
      assertJwtError(await request(server.httpUrl, `${path(`/accounts/${a.id}`)}&authorization=${a.token}`), 'JWT Token not found');
      const stream = await openEventStream(server.httpUrl, path(`/accounts/${a.id}`), { authorization: `Bearer ${a.token}` });
      try {
        assert.equal(stream.status, 200);
        assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
        await deliver(server, a.address, 'pushed');
        const update = JSON.parse((await stream.next('message')).data);
        assert.equal(update['@type'], 'Message');
        assert.equal(update.subject, 'pushed');
        assert.equal(update.accountId, `/accounts/${a.id}`);
      } finally {
        stream.close();
      }
    });
  });

  describe('an account is an address of ours', () => {
    it("the account's token reads its mail on /api, opens it in the web UI's session, and an /api address's token reads /mailtm", async () => {
      const a = await account(api, 'shared');
      await deliver(server, a.address, 'seen everywhere');
      const ours = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt: a.token });
      assert.equal(ours.status, 200);
      assert.equal(ours.json.results[0].address, a.address);
      assert.equal((await request(server.httpUrl, '/api/settings', { jwt: a.token })).json.address, a.address);

      const jar = new CookieJar();
      const opened = await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: a.token }, jar });
      assert.equal(opened.status, 200, opened.text);
      const session = await request(server.httpUrl, '/api/session/addresses', { jar });
      assert.equal(session.json.activeAddress, a.address);
      const viaCookie = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jar });
      assert.equal(viaCookie.json.results[0].uuid, (await api('/messages', { token: a.token, accept: 'application/json' })).json[0].id);
      // The UI marks it read: mail.tm's seen is the same flag.
      await request(server.httpUrl, `/api/mail/${viaCookie.json.results[0].uuid}`, { method: 'PATCH', body: { seen: true }, jar });
      assert.equal((await api('/messages', { token: a.token, accept: 'application/json' })).json[0].seen, true);

      const made = await createAddress(server, { name: 'made-by-api' });
      const me = await api('/me', { token: made.jwt, accept: 'application/json' });
      assert.equal(me.status, 200);
      assert.equal(me.json.address, made.address);
      assert.equal((await api(`/accounts/${me.json.id}`, { token: made.jwt })).status, 200);
      assertJwtError(await api('/token', { method: 'POST', body: { address: made.address, password: '' } }), 'Invalid credentials.');
    });

    it('passwords are stored as salted scrypt hashes, never as sent', async () => {
      const a = await account(api, 'hashed-1', 'same password');
      const b = await account(api, 'hashed-2', 'same password');
      const hashOf = async (address: string) => {
        const record = await server.store.findAddress(address);
        return (await server.store.getAddressPassword(record!.id))!.hash;
      };
      const [ha, hb] = [await hashOf(a.address), await hashOf(b.address)];
      assert.match(ha, /^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
      assert.notEqual(ha, hb, 'a salt of its own');
      assert.ok(!ha.includes('same password') && !ha.includes(Buffer.from('same password').toString('base64')));
    });

    it('an address the catch-all made on first mail is taken by POST /accounts, with its mail', async () => {
      const s = await startTestServer({ MAIL_DOMAINS: DOMAIN, CATCH_ALL: 'true' });
      try {
        const catchAll = apiOf(s);
        await deliver(s, `early@${DOMAIN}`, 'before the account');
        const a = await account(catchAll, 'early');
        assert.deepEqual(
          (await catchAll('/messages', { token: a.token, accept: 'application/json' })).json.map((m: { subject: string }) => m.subject),
          ['before the account'],
        );
        const again = await catchAll('/accounts', { method: 'POST', body: { address: `early@${DOMAIN}`, password: 'x' } });
        assert.equal(again.status, 422, 'claimed once');
      } finally {
        await s.close();
      }
    });
  });
});

describe('mail.tm-compatible API: configuration and limits', { timeout: 120_000 }, () => {
  it('MAILTM_API=off: every /mailtm path is our plain 404, and nothing else changes', async () => {
    const server = await startTestServer({ MAIL_DOMAINS: DOMAIN, MAILTM_API: 'off' });
    try {
      for (const [method, path] of [
        ['GET', '/mailtm/domains'],
        ['POST', '/mailtm/accounts'],
        ['POST', '/mailtm/token'],
        ['GET', '/mailtm/.well-known/mercure?topic=/accounts/x'],
      ]) {
        const res = await request(server.httpUrl, path!, { method: method!, ...(method === 'POST' ? { body: { address: `x@${DOMAIN}`, password: 'x' } } : {}) });
        assert.equal(res.status, 404, path);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      }
      assert.equal((await request(server.httpUrl, '/api/new_address', { method: 'POST', body: {} })).status, 200);
    } finally {
      await server.close();
    }
  });

  it('with CHALLENGE set, POST /accounts needs the bot check (cf_token) as POST /api/new_address does; /token does not', async () => {
    const server = await startTestServer({ MAIL_DOMAINS: DOMAIN, CHALLENGE: 'pow', POW_MAX_NUMBER: '1000' });
    try {
      const api = apiOf(server);
      const refused = await api('/accounts', { method: 'POST', body: { address: `bot@${DOMAIN}`, password: 'pw' } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.json.violations[0].propertyPath, 'cf_token');
      const made = await api('/accounts', { method: 'POST', body: { address: `human@${DOMAIN}`, password: 'pw', cf_token: await solvedToken(server.httpUrl) } });
      assert.equal(made.status, 201, made.text);
      assert.equal((await api('/token', { method: 'POST', body: { address: `human@${DOMAIN}`, password: 'pw' } })).status, 200);
      assert.equal((await api('/token', { method: 'POST', body: { address: `bot@${DOMAIN}`, password: 'pw' } })).status, 401, 'the refused one was not made');
    } finally {
      await server.close();
    }
  });

  it('CUSTOM_NAMES=false: POST /accounts is a 422 (mail.tm accounts always name their address)', async () => {
    const server = await startTestServer({ MAIL_DOMAINS: DOMAIN, CUSTOM_NAMES: 'false' });
    try {
      const res = await apiOf(server)('/accounts', { method: 'POST', body: { address: `named@${DOMAIN}`, password: 'pw' } });
      assert.equal(res.status, 422);
      assert.match(res.json.violations[0].message, /Custom names are disabled/);
    } finally {
      await server.close();
    }
  });

  describe('the rate limits, RATE_LIMIT_MAILTM_TOKEN, _ACCOUNTS and RATE_LIMIT_MAILTM at 3/60 on one server', () => {
    // Budgets are per route and per client: each case is a client of its own (127.0.3.<n>),
    // and its "another client" another address again (127.0.4.<n>).
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ MAIL_DOMAINS: DOMAIN, RATE_LIMIT_MAILTM_TOKEN: '3/60', RATE_LIMIT_MAILTM_ACCOUNTS: '3/60', RATE_LIMIT_MAILTM: '3/60' });
    });
    after(() => server?.close());
    /** The API as the client at `localAddress`. */
    const from = (localAddress: string): Api => (path, opts = {}) => apiOf(server)(path, { localAddress, ...opts });

    it('RATE_LIMIT_MAILTM_TOKEN: the 4th login of a client is a JSON 429 with Retry-After, a right password too; another client is served', async () => {
      const api = from('127.0.3.1');
      const made = await api('/accounts', { method: 'POST', body: { address: `brute@${DOMAIN}`, password: 'right' } });
      assert.equal(made.status, 201);
      for (let i = 0; i < 3; i++) assertJwtError(await api('/token', { method: 'POST', body: { address: `brute@${DOMAIN}`, password: `guess-${i}` } }), 'Invalid credentials.');
      const refused = await api('/token', { method: 'POST', body: { address: `brute@${DOMAIN}`, password: 'right' } });
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(refused.json['@type'], 'hydra:Error');
      const other = await api('/token', { method: 'POST', body: { address: `brute@${DOMAIN}`, password: 'right' }, localAddress: '127.0.4.1' });
      assert.equal(other.status, 200, 'another client has its own budget');
      assert.equal((await api('/accounts', { method: 'POST', body: { address: `more@${DOMAIN}`, password: 'x' } })).status, 201, 'POST /accounts has a budget of its own');
    });

    it('RATE_LIMIT_MAILTM_ACCOUNTS: the 4th creation of a client is a 429 and creates nothing', async () => {
      const api = from('127.0.3.2');
      for (let i = 0; i < 3; i++) assert.equal((await api('/accounts', { method: 'POST', body: { address: `made-${i}@${DOMAIN}`, password: 'x' } })).status, 201);
      const refused = await api('/accounts', { method: 'POST', body: { address: `made-3@${DOMAIN}`, password: 'x' } });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '60');
      const later = await api('/accounts', { method: 'POST', body: { address: `made-3@${DOMAIN}`, password: 'x' }, localAddress: '127.0.4.2' });
      assert.equal(later.status, 201, 'the name stayed free');
    });

    it('RATE_LIMIT_MAILTM: every other /mailtm route shares one budget (refused in mail.tm\'s shape), apart from our own routes\'', async () => {
      const api = from('127.0.3.3');
      const a = await account(api, 'budget');
      assert.equal((await api('/messages', { token: a.token })).status, 200);
      assert.equal((await api('/me', { token: a.token })).status, 200);
      assert.equal((await api('/domains')).status, 200);
      const refused = await api('/messages', { token: a.token });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(refused.json['@type'], 'hydra:Error', "in mail.tm's shape");
      assert.equal((await api(`/accounts/${a.id}`, { token: a.token })).status, 429, 'one budget');
      assert.equal((await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: a.token, localAddress: '127.0.3.3' })).status, 200, 'our API keeps its own');
      assert.equal((await api('/token', { method: 'POST', body: { address: a.address, password: a.password } })).status, 200, '/token has its own');
    });
  });

  it('Mercure streams count against the caps of GET /api/events (EVENTS_PER_ADDRESS)', async () => {
    const server = await startTestServer({ MAIL_DOMAINS: DOMAIN, EVENTS_PER_ADDRESS: '1' });
    try {
      const api = apiOf(server);
      const a = await account(api, 'capped');
      const events = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${a.token}` });
      try {
        assert.equal(events.status, 200);
        const refused = await request(server.httpUrl, `/mailtm/.well-known/mercure?topic=/accounts/${a.id}`, { headers: { authorization: `Bearer ${a.token}` } });
        assert.equal(refused.status, 429, refused.text);
        assert.equal(refused.json['@type'], 'hydra:Error');
      } finally {
        events.close();
      }
    } finally {
      await server.close();
    }
  });
});
