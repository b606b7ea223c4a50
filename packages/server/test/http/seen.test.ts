// The read flag (docs/api.md "PATCH /api/mail/{uuid}", docs/decisions.md "Seen"): every mail
// arrives unread, PATCH /api/mail/{uuid} sets it, reading a mail never does, and every
// view of the mail (list, full, parsed, search, events) shows the new value at once.
// Real SMTP delivery, real HTTP, SQLite.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CookieJar, createAddress, message, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { openEventStream } from '../helpers/event-stream.js';

const DOMAIN = 'temp-inbox.localhost';

async function deliver(server: TestServer, to: string, subject: string): Promise<void> {
  await sendMail(server.smtpPort, { to: [to], message: message({ From: 'a@example.org', To: to, Subject: subject }, `Hello, ${subject}.`) });
}

function assertPlain(res: { status: number; headers: Headers; text: string }, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.ok(res.text.length > 0 && !res.text.includes('\n    at '), 'a sentence, no stack trace');
}

describe('the seen flag over HTTP', () => {
  let server: TestServer;
  const api = (path: string, opts?: Parameters<typeof request>[2]) => request(server.httpUrl, path, opts);
  const patch = (uuid: string, body: unknown, jwt?: string, headers?: Record<string, string>) =>
    api(`/api/mail/${uuid}`, { method: 'PATCH', body, ...(jwt === undefined ? {} : { jwt }), ...(headers ? { headers } : {}) });

  before(async () => {
    server = await startTestServer({ MAIL_DOMAINS: DOMAIN });
  });
  after(async () => {
    await server.close();
  });

  it('a new mail is unread in the list, the full mail, the parsed mail, the search and its event', async () => {
    const a = await createAddress(server);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${a.jwt}` });
    try {
      await stream.next('ready');
      await deliver(server, a.address, 'fresh arrival');
      const event = JSON.parse((await stream.next('mail')).data);
      assert.equal(event.seen, false);
      const item = (await api('/api/mails?limit=10&offset=0', { jwt: a.jwt })).json.results[0];
      assert.equal(item.seen, false);
      assert.equal((await api(`/api/mail/${item.uuid}`, { jwt: a.jwt })).json.seen, false);
      assert.equal((await api(`/api/mail/${item.uuid}/parsed`, { jwt: a.jwt })).json.seen, false);
      assert.equal((await api('/api/mails/search?q=arrival&limit=10&offset=0', { jwt: a.jwt })).json.results[0].seen, false);
    } finally {
      stream.close();
    }
  });

  it('reading a mail (full or parsed) does not mark it read', async () => {
    const a = await createAddress(server);
    await deliver(server, a.address, 'just looking');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
    await api(`/api/mail/${uuid}`, { jwt: a.jwt });
    await api(`/api/mail/${uuid}/parsed`, { jwt: a.jwt });
    await api(`/api/attachment/${uuid}/0`, { jwt: a.jwt });
    assert.equal((await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0].seen, false);
  });

  it('PATCH {"seen": true} answers the list item marked read; every view shows it at once, and {"seen": false} undoes it', async () => {
    const a = await createAddress(server);
    await deliver(server, a.address, 'first one');
    await deliver(server, a.address, 'second one');
    // Each view read once before the change, so a reused response would show the old value.
    const list = async () => (await api('/api/mails?limit=10&offset=0', { jwt: a.jwt })).json.results as { uuid: string; seen: boolean }[];
    const [newer, older] = await list();
    const views = async (uuid: string) => ({
      full: (await api(`/api/mail/${uuid}`, { jwt: a.jwt })).json.seen,
      parsed: (await api(`/api/mail/${uuid}/parsed`, { jwt: a.jwt })).json.seen,
      search: (await api('/api/mails/search?q=first&limit=10&offset=0', { jwt: a.jwt })).json.results[0].seen,
    });
    assert.deepEqual(await views(older!.uuid), { full: false, parsed: false, search: false });

    const res = await patch(older!.uuid, { seen: true }, a.jwt);
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const { seen, ...rest } = res.json;
    assert.equal(seen, true);
    assert.deepEqual(rest, (({ seen: _, ...r }) => r)(older as Record<string, unknown>), 'the list item, field for field');
    assert.deepEqual(Object.keys(res.json).sort(), ['address', 'created_at', 'id', 'message_id', 'metadata', 'seen', 'source', 'uuid']);

    assert.deepEqual(
      (await list()).map((m) => [m.uuid, m.seen]),
      [
        [newer!.uuid, false],
        [older!.uuid, true],
      ],
    );
    assert.deepEqual(await views(older!.uuid), { full: true, parsed: true, search: true });

    assert.equal((await patch(older!.uuid, { seen: true }, a.jwt)).json.seen, true, 'marking it again is the same answer');
    const unread = await patch(older!.uuid, { seen: false, note: 'unknown fields are ignored' }, a.jwt);
    assert.equal(unread.status, 200, unread.text);
    assert.equal(unread.json.seen, false);
    assert.deepEqual(
      (await list()).map((m) => m.seen),
      [false, false],
    );
    assert.deepEqual(await views(older!.uuid), { full: false, parsed: false, search: false });
  });

  it('the jwt cookie (the web UI) authenticates it like GET /api/mail/{uuid}', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    await deliver(server, a.address, 'by cookie');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jar })).json.results[0];
    const res = await api(`/api/mail/${uuid}`, { method: 'PATCH', body: { seen: true }, jar });
    assert.equal(res.status, 200, res.text);
    assert.equal((await api('/api/mails?limit=1&offset=0', { jar })).json.results[0].seen, true);
  });

  it('an event stream hears mail_seen with the uuid and the new value', async () => {
    const a = await createAddress(server);
    await deliver(server, a.address, 'streamed');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${a.jwt}` });
    try {
      await stream.next('ready');
      await patch(uuid, { seen: true }, a.jwt);
      assert.deepEqual(JSON.parse((await stream.next('mail_seen')).data), { uuid, seen: true });
      await patch(uuid, { seen: false }, a.jwt);
      assert.deepEqual(JSON.parse((await stream.next('mail_seen')).data), { uuid, seen: false });
    } finally {
      stream.close();
    }
  });

  it("isolation: another address's mail, an unknown, malformed or deleted uuid are 404 like GET, and nothing changes", async () => {
    const a = await createAddress(server);
    const b = await createAddress(server);
    await deliver(server, a.address, 'only for a');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
    const foreign = await patch(uuid, { seen: true }, b.jwt);
    assertPlain(foreign, 404);
    assert.equal(foreign.text, (await api(`/api/mail/${uuid}`, { jwt: b.jwt })).text, 'the same answer as GET');
    assert.equal((await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0].seen, false, "a's mail is untouched");
    assertPlain(await patch(randomUUID(), { seen: true }, a.jwt), 404);
    assertPlain(await patch('not-a-uuid', { seen: true }, a.jwt), 404);
    assertPlain(await patch('x'.repeat(500), { seen: true }, a.jwt), 404);
    assert.equal((await api(`/api/mails/${uuid}`, { method: 'DELETE', jwt: a.jwt })).status, 200);
    assertPlain(await patch(uuid, { seen: true }, a.jwt), 404);
  });

  it('401 in plain text without credentials or with a bad token', async () => {
    const a = await createAddress(server);
    await deliver(server, a.address, 'guarded');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
    assertPlain(await patch(uuid, { seen: true }), 401);
    assertPlain(await patch(uuid, { seen: true }, `${a.jwt}x`), 401);
    assert.equal((await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0].seen, false);
  });

  it('a bad body is 400 in plain text (415 for a media type that is not JSON), and changes nothing', async () => {
    const a = await createAddress(server);
    await deliver(server, a.address, 'bad bodies');
    const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
    for (const body of ['{}', '{"seen": "true"}', '{"seen": 1}', '{"seen": null}', '[true]', 'true', 'null', '{"seen": tru', '']) {
      assertPlain(await patch(uuid, body, a.jwt), 400);
    }
    assertPlain(await api(`/api/mail/${uuid}`, { method: 'PATCH', jwt: a.jwt }), 400);
    assertPlain(await patch(uuid, 'seen=true', a.jwt, { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    assertPlain(await patch(uuid, JSON.stringify({ seen: true, pad: 'x'.repeat(70_000) }), a.jwt), 413);
    assert.equal((await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0].seen, false);
  });

  it('is in the OpenAPI document: PATCH /api/mail/{uuid} with its body and answers', async () => {
    const op = (await api('/openapi.json')).json.paths['/api/mail/{uuid}']?.patch;
    assert.ok(op, 'documented');
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '404', '429']);
    assert.deepEqual(op.requestBody.content['application/json'].schema.required, ['seen']);
  });
});

describe('the seen flag: rate limit', () => {
  it('PATCH counts under RATE_LIMIT_MAIL with GET /api/mail/{uuid}: past it 429 with Retry-After, and no change', async () => {
    const server = await startTestServer({ MAIL_DOMAINS: DOMAIN, RATE_LIMIT_MAIL: '3/60' });
    try {
      const a = await createAddress(server);
      await deliver(server, a.address, 'limited');
      const api = (path: string, opts?: Parameters<typeof request>[2]) => request(server.httpUrl, path, opts);
      const { uuid } = (await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0];
      assert.equal((await api(`/api/mail/${uuid}`, { jwt: a.jwt })).status, 200);
      assert.equal((await api(`/api/mail/${uuid}`, { method: 'PATCH', body: { seen: true }, jwt: a.jwt })).status, 200);
      assert.equal((await api(`/api/mail/${uuid}`, { method: 'PATCH', body: { seen: false }, jwt: a.jwt })).status, 200);
      const refused = await api(`/api/mail/${uuid}`, { method: 'PATCH', body: { seen: true }, jwt: a.jwt });
      assertPlain(refused, 429);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal((await api('/api/mails?limit=1&offset=0', { jwt: a.jwt })).json.results[0].seen, false, 'the refused request changed nothing');
      assert.equal((await api(`/api/mail/${uuid}`, { jwt: a.jwt })).status, 429, 'the same budget as GET');
      const other = await api(`/api/mail/${uuid}`, { method: 'PATCH', body: { seen: true }, jwt: a.jwt, localAddress: '127.0.0.2' });
      assert.equal(other.status, 200, 'another client has its own budget');
    } finally {
      await server.close();
    }
  });
});
