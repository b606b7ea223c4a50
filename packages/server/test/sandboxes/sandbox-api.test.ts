// Sandboxes through our API, the SDK and the CLI (docs/api.md "Sandboxes"): the token
// route's answers, SANDBOXES across restarts (a changed password applies, the mail stays),
// the admin's create, list, rotate and delete, the quota, wait with to= matching a Bcc-only
// envelope recipient, client.openSandbox, and `temp-inbox sandbox login`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { TempInboxClient, TempInboxError } from '../../../client/src/index.js';
import { client, request, serversStoppedAfter, startTestServer, tmp, type TestServer } from '../helpers/harness.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const start = serversStoppedAfter();
const ADMIN_TOKEN = 'Sandbox-Admin-Token-3f9k2m7q8w1z5x4c6vB';

const send = (server: TestServer, user: string, pass: string, mail: Record<string, unknown>) =>
  nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user, pass } }).sendMail({ from: 'app@staging.example', text: 'hello', ...mail });

const token = (server: TestServer, body: unknown, headers: Record<string, string> = {}) => request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body, headers });

describe('POST /api/sandbox/token', () => {
  it('answers a JWT (and the jwt cookie) for JSON or HTTP Basic; 401 for a wrong password; 400 for neither; every /api route then works', async () => {
    const server = await start({ SANDBOXES: 'qa:pa55word' });
    const ok = await token(server, { name: 'QA', password: 'pa55word' });
    assert.equal(ok.status, 200, ok.text);
    const body = ok.json as { name: string; address: string; jwt: string };
    assert.equal(body.name, 'qa');
    assert.equal(body.address, 'qa@sandbox.invalid');
    assert.match(ok.headers.get('set-cookie') ?? '', /jwt=/);
    const basic = await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', headers: { authorization: `Basic ${Buffer.from('qa:pa55word').toString('base64')}` } });
    assert.equal(basic.status, 200, basic.text);
    const wrong = await token(server, { name: 'qa', password: 'nope' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('content-type') ?? '', /text\/plain/);
    assert.equal((await token(server, {})).status, 400);
    assert.equal((await token(server, { name: 'qa', password: 'x'.repeat(5000) })).status, 400, 'past the schema: a plain 400');
    const api = client(server);
    assert.equal((await api('/api/settings', { jwt: body.jwt })).status, 200);
    const info = await api('/api/sandbox', { jwt: body.jwt });
    assert.equal((info.json as { name: string }).name, 'qa');
    // An address's token is not a sandbox's.
    const other = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: {} });
    assert.equal((await api('/api/sandbox/chaos', { jwt: (other.json as { jwt: string }).jwt })).status, 404);
    // Its inbox is not deleted with its token.
    assert.equal((await api('/api/delete_address', { method: 'DELETE', jwt: body.jwt })).status, 403);
    assert.equal((await token(server, { name: 'qa', password: 'pa55word' })).status, 200);
  });
});

describe("a sandbox's webhook", () => {
  it('POSTs each captured mail with its envelope recipients, the Bcc-only one included', async () => {
    const server = await start({ SANDBOXES: 'hooked:hook-pass', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const receiver = await startReceiver();
    try {
      const jwt = ((await token(server, { name: 'hooked', password: 'hook-pass' })).json as { jwt: string }).jwt;
      const set = await client(server)('/api/webhook', { method: 'PUT', jwt, body: { url: receiver.url() } });
      assert.equal(set.status, 200, set.text);
      receiver.secret = (set.json as { secret: string }).secret;
      await send(server, 'hooked', 'hook-pass', { to: 'alice@customer.com', bcc: 'hidden@audit.example', subject: 'hooked' });
      const [post] = await receiver.untilPosts(1);
      assert.equal(post!.verified, true);
      assert.equal(post!.event.data.address, 'hooked@sandbox.invalid');
      assert.deepEqual(post!.event.data.recipients, ['alice@customer.com', 'hidden@audit.example']);
    } finally {
      await receiver.stop();
    }
  });
});

describe('SANDBOXES across restarts', () => {
  it('a restart with a changed password applies it and keeps the mail; a bad value stops start-up with one line', async () => {
    const dir = tmp('temp-inbox-sandbox-restart-');
    let server = await startTestServer({ SANDBOXES: 'ci:first-pass' }, dir);
    try {
      await send(server, 'ci', 'first-pass', { to: 'user@customer.com', subject: 'before restart' });
    } finally {
      await server.close();
    }
    server = await startTestServer({ SANDBOXES: 'ci:second-pass other:x1' }, dir);
    try {
      assert.equal((await token(server, { name: 'ci', password: 'first-pass' })).status, 401, 'the old password no longer works');
      const res = await token(server, { name: 'ci', password: 'second-pass' });
      assert.equal(res.status, 200);
      const list = await client(server)('/api/mails?limit=10&offset=0', { jwt: (res.json as { jwt: string }).jwt });
      assert.equal((list.json as { count: number }).count, 1, 'the mail is kept');
    } finally {
      await server.close();
    }
    for (const bad of ['nocolon', ':pw', 'Bad Name!:pw', 'a:pw a:pw2', 'x:']) {
      await assert.rejects(startTestServer({ SANDBOXES: bad }, dir), (err: Error) => {
        assert.match(err.message, /^SANDBOXES is invalid: /);
        assert.doesNotMatch(err.message, /\n/);
        assert.ok(!/pw2?\b/.test(err.message.replace(/pair/g, '')), 'no password repeated');
        return true;
      });
    }
  });
});

describe('/api/admin/sandboxes', () => {
  it('creates, lists, rotates the password of and deletes sandboxes at run time; AUTH appears with the first', async () => {
    const server = await start({ ADMIN_TOKEN });
    const admin = (path: string, opts: Parameters<typeof request>[2] = {}) => request(server.httpUrl, path, { ...opts, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } });
    assert.equal((await request(server.httpUrl, '/api/admin/sandboxes')).status, 401);
    assert.deepEqual((await admin('/api/admin/sandboxes')).json, { results: [] });
    const created = await admin('/api/admin/sandboxes', { method: 'POST', body: { name: 'team-x', password: 'one', max_mails: 2 } });
    assert.equal(created.status, 200, created.text);
    const sb = created.json as { id: number; name: string; max_mails: number; address: string };
    assert.equal(sb.max_mails, 2);
    assert.equal((await admin('/api/admin/sandboxes', { method: 'POST', body: { name: 'bad name', password: 'x' } })).status, 400);
    assert.equal((await admin('/api/admin/sandboxes', { method: 'POST', body: { name: 'ok', password: '' } })).status, 400);

    // The quota: three mails, the oldest removed.
    for (const subject of ['m1', 'm2', 'm3']) await send(server, 'team-x', 'one', { to: 'someone@x.example', subject });
    const jwt = ((await token(server, { name: 'team-x', password: 'one' })).json as { jwt: string }).jwt;
    const subjects = ((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json as { results: { metadata: string }[] }).results.map(
      (m) => (JSON.parse(m.metadata) as { subject: string }).subject,
    );
    assert.deepEqual(subjects, ['m3', 'm2']);

    const listed = (await admin('/api/admin/sandboxes')).json as { results: { name: string }[] };
    assert.deepEqual(listed.results.map((s) => s.name), ['team-x']);
    assert.equal((await admin(`/api/admin/sandboxes/${sb.id}/password`, { method: 'PUT', body: { password: 'two' } })).status, 200);
    assert.equal((await token(server, { name: 'team-x', password: 'one' })).status, 401);
    assert.equal((await token(server, { name: 'team-x', password: 'two' })).status, 200);
    assert.equal((await admin('/api/admin/sandboxes/999999/password', { method: 'PUT', body: { password: 'x' } })).status, 404);
    assert.equal((await admin('/api/admin/sandboxes/abc', { method: 'DELETE' })).status, 400);
    assert.equal((await admin(`/api/admin/sandboxes/${sb.id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await admin(`/api/admin/sandboxes/${sb.id}`, { method: 'DELETE' })).status, 404);
    assert.equal((await client(server)('/api/settings', { jwt })).status, 401, 'its token stops working with it');
    assert.equal((await token(server, { name: 'team-x', password: 'two' })).status, 401);
  });
});

describe('SDK and CLI', () => {
  it('client.openSandbox gives the same inbox object; waitForMail with to= finds a Bcc-only recipient; chaos through the SDK', async () => {
    const server = await start({ SANDBOXES: 'sdk:sdk-pass' });
    const sdk = new TempInboxClient({ baseUrl: server.httpUrl });
    await assert.rejects(sdk.openSandbox({ name: 'sdk', password: 'wrong' }), (err: unknown) => err instanceof TempInboxError && err.status === 401);
    const inbox = await sdk.openSandbox({ name: 'sdk', password: 'sdk-pass' });
    assert.equal(inbox.address, 'sdk@sandbox.invalid');
    assert.equal(inbox.sandbox?.name, 'sdk');
    const waited = inbox.waitForMail({ to: 'bob@customer.com', timeout: 20_000 });
    await send(server, 'sdk', 'sdk-pass', { to: 'alice@customer.com', subject: 'not for bob' });
    await send(server, 'sdk', 'sdk-pass', { to: 'alice@customer.com', bcc: 'bob@customer.com', subject: 'for bob too', text: 'Your code: 771204' });
    const message = await waited;
    assert.equal(message.subject, 'for bob too');
    assert.deepEqual((await inbox.list()).mails.map((m) => m.recipients), [['alice@customer.com', 'bob@customer.com'], ['alice@customer.com']]);
    assert.equal(await inbox.waitForCode({ to: 'bob@', since: 0 }), '771204');
    assert.deepEqual(await inbox.sandbox!.setChaos({ sender: { errorCode: 451, probability: 100 } }), { sender: { errorCode: 451, probability: 100 } });
    await assert.rejects(send(server, 'sdk', 'sdk-pass', { to: 'x@y.example' }), (err: { responseCode?: number }) => err.responseCode === 451);
    await inbox.sandbox!.setChaos({});
    // The server-side filter too: a wait with to= answers only the mail to that recipient.
    const wait = await client(server)(`/api/mails/wait?since=0&timeout=1&to=${encodeURIComponent('bob@customer')}`, { jwt: inbox.token });
    assert.deepEqual((wait.json as { results: { metadata: string }[] }).results.map((m) => (JSON.parse(m.metadata) as { subject: string }).subject), ['for bob too']);
    // `await using` leaves a sandbox in place.
    await inbox[Symbol.asyncDispose]();
    assert.equal((await client(server)('/api/settings', { jwt: inbox.token })).status, 200);
  });

  it('temp-inbox sandbox login NAME prints its token; wait --to takes the mail to that recipient', async () => {
    const server = await start({ SANDBOXES: 'cli:cli-pass' });
    const cliFile = fileURLToPath(new URL('../../../client/src/cli.ts', import.meta.url));
    const run = (args: string[], env: Record<string, string> = {}) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', cliFile, ...args], { env: { ...process.env, TEMP_INBOX_URL: server.httpUrl, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => resolve({ code, out, err }));
      });
    const login = await run(['sandbox', 'login', 'cli', '--json'], { TEMP_INBOX_SANDBOX_PASSWORD: 'cli-pass' });
    assert.equal(login.code, 0, login.err);
    const { token: jwt, address } = JSON.parse(login.out) as { token: string; address: string };
    assert.equal(address, 'cli@sandbox.invalid');
    assert.equal((await run(['sandbox', 'login', 'cli', '--password', 'wrong'])).code, 1);
    assert.equal((await run(['sandbox', 'login'])).code, 2);
    await send(server, 'cli', 'cli-pass', { to: 'carol@customer.com', subject: 'for carol', text: 'code 55512' });
    const waited = await run(['wait', '--code', '--any', '--to', 'carol@customer.com', '--timeout', '20s', '--token', jwt]);
    assert.equal(waited.code, 0, waited.err);
    assert.equal(waited.out.trim(), '55512');
  });
});
