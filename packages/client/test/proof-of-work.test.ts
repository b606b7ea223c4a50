// The SDK and the CLI against a service with the self-hosted bot check on
// (CHALLENGE=pow): they solve a fresh proof of work for every address they create,
// without being asked, and send none to a service without the check.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { startService } from './helpers/service.js';
import { TempInboxClient, TempInboxError } from '../src/index.js';

const BIN = fileURLToPath(new URL('../bin/temp-inbox.js', import.meta.url));

describe('proof of work, solved by the SDK and the CLI', { timeout: 120_000 }, () => {
  let pow: TempInbox;
  let open: TempInbox;
  before(async () => {
    pow = await startService({ env: { CHALLENGE: 'pow' } });
    open = await startService();
  });
  after(async () => {
    await pow?.stop();
    await open?.stop();
  });

  it('the service refuses an address without a solution, so the check is really on', async () => {
    const res = await fetch(`${pow.url}/api/new_address`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 400);
  });

  it('createInbox solves it, once per attempt: a taken name falls back to a random one with a fresh solution', async () => {
    const client = new TempInboxClient({ baseUrl: pow.url });
    const first = await client.createInbox({ name: 'pow-named' });
    assert.equal(first.address, `pow-named@${pow.domain}`);
    const again = await client.createInbox({ name: 'pow-named' });
    assert.notEqual(again.address, first.address, 'the 409 was followed by a random name, which needed its own solution');
    await first.delete();
    await again.delete();
  });

  it('the CLI creates an address on it too', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'new', '--json'], { env: { PATH: process.env['PATH'] ?? '', TEMP_INBOX_URL: pow.url }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
    });
    assert.equal(code, 0, stderr);
    assert.match(JSON.parse(stdout).address as string, new RegExp(`@${pow.domain.replace(/\./g, '\\.')}$`));
  });

  it('a caller-given cf_token is sent as it is, unsolved (a wrong one is the service\'s 400)', async () => {
    const client = new TempInboxClient({ baseUrl: pow.url });
    await assert.rejects(client.createInbox({ cfToken: 'not-a-solution' }), (err: unknown) => err instanceof TempInboxError && err.status === 400);
  });

  it('without the check, no challenge is asked for and the address is made', async () => {
    const client = new TempInboxClient({ baseUrl: open.url });
    const inbox = await client.createInbox();
    assert.match(inbox.address, new RegExp(`@${open.domain.replace(/\./g, '\\.')}$`));
    await inbox.delete();
  });
});
