// The client SDK and CLI against the whole service: real HTTP, real SMTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Inbox, TempInboxClient, TempInboxError, WaitTimeoutError } from '../src/index.js';
import { DOMAIN, message, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

function mailTo(server: TestServer, inbox: Inbox, subject: string, body: string) {
  return sendMail(server.smtpPort, { to: [inbox.address], message: message({ Subject: subject, From: 'App <app@example.com>' }, body) });
}

/** Runs the CLI; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('client SDK', () => {
  let server: TestServer;
  let client: TempInboxClient;
  before(async () => {
    server = await startTestServer();
    client = new TempInboxClient({ baseUrl: `${server.httpUrl}/` });
  });
  after(async () => server?.close());

  it('creates inboxes: random, named, and a random one when the name is taken or refused', async () => {
    const random = await client.createInbox();
    assert.match(random.address, new RegExp(`^[a-z0-9]{10}@${DOMAIN}$`));
    const named = await client.createInbox({ name: 'sdk-alice' });
    assert.equal(named.address, `sdk-alice@${DOMAIN}`);
    const taken = await client.createInbox({ name: 'sdk-alice' });
    assert.notEqual(taken.address, named.address);
    const refused = await client.createInbox({ name: 'not a name!' });
    assert.match(refused.address, new RegExp(`@${DOMAIN}$`));
    await assert.rejects(client.createInbox({ name: 'sdk-alice', fallbackToRandom: false }), (err: unknown) => err instanceof TempInboxError && err.status === 409);
    // A bad domain is not the name's fault: it fails even with the fallback.
    await assert.rejects(client.createInbox({ name: 'sdk-bob', domain: 'elsewhere.example' }), (err: unknown) => err instanceof TempInboxError && err.status === 400);
  });

  it('waitForCode returns the code of the mail the moment it arrives', async () => {
    const inbox = await client.createInbox();
    const started = Date.now();
    const code = inbox.waitForCode({ timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    await mailTo(server, inbox, 'Your code', 'Your verification code is 627183.');
    assert.equal(await code, '627183');
    assert.ok(Date.now() - started < 5000);
  });

  it('successive waits return successive mails; match skips the others', async () => {
    const inbox = await client.createInbox();
    await mailTo(server, inbox, 'first', 'one');
    await mailTo(server, inbox, 'newsletter', 'ignore me');
    await mailTo(server, inbox, 'Confirm your email', 'https://app.example/confirm?t=abc and https://app.example/help');
    assert.equal((await inbox.waitForMail()).metadata.subject, 'first');
    const confirm = await inbox.waitForMail({ match: (m) => m.metadata.subject.startsWith('Confirm') });
    assert.equal(confirm.metadata.subject, 'Confirm your email');
    assert.equal(await inbox.waitForLink({ since: 0, pattern: /confirm/ }), 'https://app.example/confirm?t=abc');
    // Everything so far has been returned: the next wait times out.
    await assert.rejects(inbox.waitForMail({ timeoutMs: 1000 }), WaitTimeoutError);
  });

  it('gives up with WaitTimeoutError after timeoutMs', async () => {
    const inbox = await client.createInbox();
    const started = Date.now();
    await assert.rejects(inbox.waitForCode({ timeoutMs: 1500 }), WaitTimeoutError);
    const took = Date.now() - started;
    assert.ok(took >= 1000 && took < 4000, `took ${took} ms`);
  });

  it('lists, reads, deletes, clears and destroys', async () => {
    const inbox = await client.createInbox();
    await mailTo(server, inbox, 'a', 'alpha');
    await mailTo(server, inbox, 'b', 'beta');
    const { mails, count } = await inbox.list();
    assert.equal(count, 2);
    assert.deepEqual(
      mails.map((m) => m.metadata.subject),
      ['b', 'a'],
    );
    const full = await inbox.read(mails[0]!.uuid);
    assert.match(full.raw, /^Received: /);
    await inbox.delete(mails[0]!.uuid);
    assert.equal((await inbox.list()).count, 1);
    await assert.rejects(inbox.read(mails[0]!.uuid), (err: unknown) => err instanceof TempInboxError && err.status === 404);
    await inbox.clear();
    assert.equal((await inbox.list()).count, 0);
    await inbox.destroy();
    await assert.rejects(inbox.list(), (err: unknown) => err instanceof TempInboxError && err.status === 401);
  });
});

describe('client SDK under rate limits', () => {
  it('waits out a 429 (Retry-After) and then succeeds', async () => {
    const server = await startTestServer({ RATE_LIMIT_MAILS: '1/1' });
    try {
      const client = new TempInboxClient({ baseUrl: server.httpUrl });
      const inbox = await client.createInbox();
      await inbox.list();
      const started = Date.now();
      assert.equal((await inbox.list()).count, 0, 'the second list is refused once, then served');
      assert.ok(Date.now() - started >= 900, 'it waited for Retry-After');
      const impatient = new TempInboxClient({ baseUrl: server.httpUrl, maxRateLimitRetries: 0 });
      const same = impatient.inbox(inbox.address, inbox.jwt);
      await same.list().catch(() => undefined);
      await assert.rejects(same.list(), (err: unknown) => err instanceof TempInboxError && err.status === 429);
    } finally {
      await server.close();
    }
  });
});

describe('temp-inbox CLI', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());

  it('new, then wait --code, list, read and delete-address', async () => {
    const created = await cli(['new', '--name', 'cli-user', '--url', server.httpUrl]);
    assert.equal(created.code, 0, created.stderr);
    const { address, jwt } = JSON.parse(created.stdout) as { address: string; jwt: string };
    assert.equal(address, `cli-user@${DOMAIN}`);
    const env = { TEMP_INBOX_URL: server.httpUrl, TEMP_INBOX_JWT: jwt };

    const waiting = cli(['wait', '--code', '--timeout', '10'], env);
    await new Promise((r) => setTimeout(r, 500));
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'Sign in' }, 'Your login code: 908172') });
    const code = await waiting;
    assert.equal(code.code, 0, code.stderr);
    assert.equal(code.stdout, '908172\n');

    const listed = await cli(['list'], env);
    const { count, mails } = JSON.parse(listed.stdout) as { count: number; mails: { uuid: string; metadata: { subject: string } }[] };
    assert.equal(count, 1);
    assert.equal(mails[0]!.metadata.subject, 'Sign in');
    const read = await cli(['read', mails[0]!.uuid], env);
    assert.match((JSON.parse(read.stdout) as { raw: string }).raw, /Your login code: 908172/);
    assert.equal((await cli(['delete-address'], env)).code, 0);
    const gone = await cli(['list'], env);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /401/);
  });

  it('exits 1 when no mail comes in time, 2 on a usage error', async () => {
    const { jwt } = JSON.parse((await cli(['new', '--url', server.httpUrl])).stdout) as { jwt: string };
    const timeout = await cli(['wait', '--timeout', '1', '--url', server.httpUrl, '--jwt', jwt]);
    assert.equal(timeout.code, 1);
    assert.match(timeout.stderr, /No matching mail/);
    assert.equal((await cli(['wait', '--url', server.httpUrl])).code, 2, 'no token');
    assert.equal((await cli(['wait', '--timeout', 'soon', '--jwt', jwt, '--url', server.httpUrl])).code, 2);
    assert.equal((await cli(['frobnicate', '--jwt', jwt])).code, 2);
    assert.equal((await cli(['--bogus'])).code, 2);
    assert.equal((await cli([])).code, 2);
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /usage: temp-inbox/);
    const strict = await cli(['new', '--name', 'cli-taken', '--env', '--url', server.httpUrl]);
    assert.equal(strict.code, 0);
    assert.match(strict.stdout, new RegExp(`^export TEMP_INBOX_ADDRESS='cli-taken@${DOMAIN}'\nexport TEMP_INBOX_JWT='[\\w.-]+'\n$`));
    const refused = await cli(['new', '--name', 'cli-taken', '--strict', '--url', server.httpUrl]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /409/);
  });
});
