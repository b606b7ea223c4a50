// The deliverability report from the SDK (message.report(), inbox.report()) and from the
// CLI (`temp-inbox report <uuid>`: the sections as text, exit 1 when one fails), against a
// real service over real SMTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TempInboxClient } from '../src/index.js';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { send } from './helpers/mail.js';
import { startService } from './helpers/service.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the deliverability report from the SDK and the CLI', { timeout: 180_000 }, () => {
  let service: TempInbox;
  let client: TempInboxClient;
  before(async () => {
    service = await startService();
    client = new TempInboxClient({ baseUrl: service.url });
  });
  after(() => service?.stop());

  it('message.report() and inbox.report(uuid) answer the same sections; the CLI prints them and exits 1 on a failed section, 0 otherwise', async () => {
    const inbox = await client.createInbox();
    await send(service, { to: inbox.address, subject: 'With a script', text: 'hi', html: '<p>hi</p><script>alert(1)</script>' });
    const bad = await inbox.waitForMail({ timeout: 30_000 });
    const report = await bad.report();
    assert.equal(report.content.findings.find((f) => f.rule === 'script')?.verdict, 'fail');
    assert.equal(report.verdict, 'fail');
    assert.deepEqual((await inbox.report(bad.uuid)).content, report.content);

    const env = { TEMP_INBOX_URL: service.url, TEMP_INBOX_TOKEN: inbox.token };
    const failed = await cli(['report', bad.uuid], env);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stdout, /^Deliverability: FAIL\n/);
    assert.match(failed.stdout, /FAIL script: 1 <script> element\(s\)/);
    assert.match(failed.stdout, /n\/a +Spam score \(No spam scanner is configured \(SPAM_SCANNER\)\.\)/);
    const json = await cli(['report', bad.uuid, '--json'], env);
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout).content, report.content);

    await send(service, { to: inbox.address, subject: 'Plain', text: 'Your order has shipped.' });
    const plain = await inbox.waitForMail({ timeout: 30_000, subject: 'Plain' });
    const ok = await cli(['report', plain.uuid], env);
    assert.equal(ok.stderr, '');
    assert.equal(ok.code, (await plain.report()).verdict === 'fail' ? 1 : 0);
    assert.equal((await cli(['report'], env)).code, 2, 'a uuid is needed');
  });
});
