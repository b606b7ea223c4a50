// A team moving from Mailpit (docs/api.md "Sandboxes", "Moving from Mailpit or MailHog"):
// what such a team does first, checked end to end with its own clients.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { MailpitClient } from 'mailpit-api';
import { TempInboxClient } from '../../../client/src/index.js';
import { request, serversStoppedAfter, SmtpClient, startTestServer, tmp } from '../helpers/harness.js';

const start = serversStoppedAfter();
const ADMIN_TOKEN = 'Sandbox-NewUser-Admin-Token-7h2k9d4s1q';

describe('rotating a sandbox password', () => {
  it("refuses the old password on /mailpit at once, even right after a request with it succeeded", async () => {
    const server = await start({ ADMIN_TOKEN, SANDBOXES: 'ci:old-secret' });
    const admin = (path: string, opts: Parameters<typeof request>[2] = {}) => request(server.httpUrl, path, { ...opts, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } });
    const old = new MailpitClient(`${server.httpUrl}/mailpit`, { auth: { username: 'ci', password: 'old-secret' } });
    assert.equal((await old.getInfo()).Messages, 0, 'the old password opens before the rotation (and is remembered)');
    const id = ((await admin('/api/admin/sandboxes')).json as { results: { id: number }[] }).results[0]!.id;
    assert.equal((await admin(`/api/admin/sandboxes/${id}/password`, { method: 'PUT', body: { password: 'new-secret' } })).status, 200);
    const basic = (pass: string) => ({ authorization: `Basic ${Buffer.from(`ci:${pass}`).toString('base64')}` });
    const refused = await request(server.httpUrl, '/mailpit/api/v1/info', { headers: basic('old-secret') });
    assert.equal(refused.status, 401, 'the admin docs say new logins need the new password at once');
    assert.equal((await request(server.httpUrl, '/mailhog/api/v2/messages', { headers: basic('old-secret') })).status, 401);
    const fresh = new MailpitClient(`${server.httpUrl}/mailpit`, { auth: { username: 'ci', password: 'new-secret' } });
    assert.equal((await fresh.getInfo()).Messages, 0);
  });
});

describe('a sandbox left out of SANDBOXES at a restart', () => {
  it('is kept with its password and mail (as docs/api.md says) until the admin API deletes it', async () => {
    const dir = tmp('temp-inbox-sandbox-left-out-');
    const basic = (pair: string) => ({ authorization: `Basic ${Buffer.from(pair).toString('base64')}` });
    let server = await startTestServer({ SANDBOXES: 'ci:ci-pass old:old-pass' }, dir);
    await server.close();
    server = await startTestServer({ ADMIN_TOKEN, SANDBOXES: 'ci:ci-pass' }, dir);
    try {
      assert.equal((await request(server.httpUrl, '/mailpit/api/v1/info', { headers: basic('old:old-pass') })).status, 200);
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const list = (await request(server.httpUrl, '/api/admin/sandboxes', { headers: admin })).json as { results: { id: number; name: string }[] };
      const old = list.results.find((b) => b.name === 'old')!;
      assert.equal((await request(server.httpUrl, `/api/admin/sandboxes/${old.id}`, { method: 'DELETE', headers: admin })).status, 200);
      assert.equal((await request(server.httpUrl, '/mailpit/api/v1/info', { headers: basic('old:old-pass') })).status, 401);
    } finally {
      await server.close();
    }
  });
});

describe('client.openSandbox after the mail was sent', () => {
  it('waits for later mail by default (as packages/client/README.md says); since: 0 finds the earlier one', async () => {
    const server = await start({ SANDBOXES: 'ci:ci-pass' });
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user: 'ci', pass: 'ci-pass' } })
      .sendMail({ from: 'app@staging.example', to: 'alice@customer.com', subject: 'earlier run', text: 'code 482913' });
    const client = new TempInboxClient({ baseUrl: server.httpUrl });
    const later = await client.openSandbox({ name: 'ci', password: 'ci-pass' });
    await assert.rejects(later.waitForMail({ to: 'alice@customer.com', timeout: 1_000 }), { name: 'WaitTimeoutError' });
    const all = await client.openSandbox({ name: 'ci', password: 'ci-pass', since: 0 });
    assert.equal(await all.waitForCode({ to: 'alice@customer.com', timeout: 10_000 }), '482913');
    assert.equal((await later.waitForMail({ to: 'alice@customer.com', since: 0, timeout: 10_000 })).subject, 'earlier run');
  });
});

describe('an app that forgot to log in', () => {
  it("is told at RCPT TO that a sandbox needs SMTP AUTH (only where there are sandboxes)", async () => {
    for (const [env, hint] of [[{ SANDBOXES: 'ci:ci-pass' }, true], [{}, false]] as const) {
      const server = await start(env);
      const smtp = await SmtpClient.connect(server.smtpPort);
      try {
        await smtp.script([['EHLO app.test', 250], ['MAIL FROM:<app@staging.example>', 250]]);
        const rcpt = await smtp.command('RCPT TO:<alice@customer.com>');
        assert.equal(rcpt.code, 550);
        assert.equal(/log in \(SMTP AUTH\) as a sandbox/.test(rcpt.text), hint, rcpt.text);
      } finally {
        await smtp.quit();
      }
    }
  });
});
