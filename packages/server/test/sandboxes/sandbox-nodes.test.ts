// Sandboxes on two nodes of one PostgreSQL deployment (with Redis), and AUTH after STARTTLS
// from a client that is not on loopback (docs/decisions.md "Sandboxes"): a sandbox the admin
// creates on one node is a login on the other (which offers AUTH from then on, having had
// none), its mail is read on either node, the lock-out is shared through Redis, and a
// deleted sandbox is refused everywhere.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { client, request, serversStoppedAfter, SmtpClient, tmp, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

const ADMIN_TOKEN = 'Nodes-Sandbox-Admin-7Hq2Lp9Xz4Wv1Ks8';
const skip = skipUnless('postgres', 'redis');

const sendAs = (server: TestServer, user: string, pass: string, mail: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user, pass }, ...extra }).sendMail({ from: 'app@staging.example', text: 'x', ...mail });

/** Polls `ok` (each try a real SMTP session) until it holds or `ms` pass. */
async function eventually(what: string, ok: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sandboxes on two nodes (PostgreSQL + Redis)', { skip }, () => {
  const nodes = twoNodes('sbx', skip, { ADMIN_TOKEN, SANDBOX_LOGIN_FAILURES: '2/600', SANDBOX_LOGIN_FAILURES_PER_NAME: '0' });
  let a: TestServer;
  let b: TestServer;
  before(() => {
    ({ a, b } = nodes);
  });

  it("a sandbox created on node a is a login on node b; its mail is read on either; the lock-out is shared; deleted, it is refused on both", async () => {
    const ehloOf = async (node: TestServer) => {
      const smtp = await SmtpClient.connect(node.smtpPort);
      const r = await smtp.command('EHLO client.test');
      await smtp.quit();
      return r.text;
    };
    assert.doesNotMatch(await ehloOf(b), /AUTH/, 'no sandbox yet: no AUTH');
    const created = await request(a.httpUrl, '/api/admin/sandboxes', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { name: 'shared', password: 'shared-pass' } });
    assert.equal(created.status, 200, created.text);
    // Node b learns of the first sandbox within its recheck (a few seconds).
    await eventually('node b offers AUTH', async () => /AUTH PLAIN LOGIN/.test(await ehloOf(b)));
    const info = await sendAs(b, 'shared', 'shared-pass', { to: 'alice@customer.com', bcc: 'bob@customer.com', subject: 'via b' });
    assert.match(info.response, /^250 /);
    const login = await request(a.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'shared', password: 'shared-pass' } });
    const jwt = (login.json as { jwt: string }).jwt;
    const list = (await client(a)('/api/mails?limit=10&offset=0', { jwt })).json as { results: { recipients: string[] }[] };
    assert.deepEqual(list.results.map((m) => m.recipients), [['alice@customer.com', 'bob@customer.com']]);

    // Two wrong guesses on node a lock this client out on node b too (Redis).
    for (let i = 0; i < 2; i++) {
      await assert.rejects(sendAs(a, 'shared', `wrong-${i}`, { to: 'x@y.example' }), (err: { responseCode?: number }) => err.responseCode === 535);
    }
    await assert.rejects(sendAs(b, 'shared', 'shared-pass', { to: 'x@y.example' }), (err: { responseCode?: number }) => err.responseCode === 421);

    const id = (created.json as { id: number }).id;
    assert.equal((await request(b.httpUrl, `/api/admin/sandboxes/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 200);
    assert.equal((await client(a)('/api/settings', { jwt })).status, 401);
    const again = await request(a.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'shared', password: 'shared-pass' }, headers: {} });
    assert.ok([401, 429].includes(again.status), `refused: ${again.status}`);
  });
});

const outside = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

function opensslMissing(): string | false {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'openssl is not installed';
  }
}

describe('AUTH after STARTTLS from a client off loopback', { skip: !outside ? 'no non-loopback IPv4 address' : opensslMissing() }, () => {
  const start = serversStoppedAfter();
  const dir = tmp('temp-inbox-sandbox-tls-');
  let server: TestServer;
  before(async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=mx.test', '-addext', 'subjectAltName=DNS:mx.test', '-keyout', key, '-out', cert],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    server = await start({ SANDBOXES: 'tls:tls-pass', SMTP_HOST: '0.0.0.0', SMTP_TLS_CERT: cert, SMTP_TLS_KEY: key });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('logs in once the session is encrypted; the same client without STARTTLS gets 538 5.7.11', async () => {
    const transport = (extra: Record<string, unknown>) =>
      nodemailer.createTransport({ host: outside, port: server.smtpPort, secure: false, auth: { user: 'tls', pass: 'tls-pass' }, tls: { rejectUnauthorized: false }, ...extra });
    const info = await transport({ requireTLS: true }).sendMail({ from: 'a@x.example', to: 'someone@customer.com', subject: 'over tls', text: 'x' });
    assert.match(info.response, /^250 /);
    await assert.rejects(transport({ ignoreTLS: true }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }), (err: { responseCode?: number; response?: string }) => {
      assert.equal(err.responseCode, 538);
      assert.match(err.response ?? '', /^538 5\.7\.11 /);
      return true;
    });
    const raw = await server.store.findSandbox('tls');
    const mails = await server.store.listMails(raw!.addressId, 10, 0);
    assert.equal(mails.count, 1);
    assert.match((await server.store.getMail(raw!.addressId, mails.results[0]!.uuid))!.raw.toString('latin1'), /with ESMTPSA|with ESMTPS/);
  });
});
