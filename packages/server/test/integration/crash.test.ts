// docs/decisions.md "SMTP": 250 only after the mail is committed — a process killed right
// after a 250 loses nothing. The service runs as a real child process here.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createAddress, message, request, SmtpClient, tmp } from '../helpers/harness.js';
import { startProcess, type ServiceProcess } from '../helpers/process.js';

describe('crash safety', () => {
  const dir = tmp('temp-inbox-crash-');
  const running: ServiceProcess[] = [];
  after(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every mail that got a 250 when the process is SIGKILLed right after', async () => {
    const first = await startProcess({ DATA_DIR: dir });
    running.push(first);
    const { address, jwt } = await createAddress(first, { name: 'crash' });

    const smtp = await SmtpClient.connect(first.smtpPort);
    assert.equal((await smtp.command('EHLO crash.test')).code, 250);
    const accepted: string[] = [];
    for (let i = 0; i < 25; i++) {
      assert.equal((await smtp.command('MAIL FROM:<load@example.com>')).code, 250);
      assert.equal((await smtp.command(`RCPT TO:<${address}>`)).code, 250);
      assert.equal((await smtp.command('DATA')).code, 354);
      const id = `<crash-${i}@test>`;
      const reply = await smtp.data(message({ Subject: `crash ${i}`, 'Message-ID': id }, `body ${i}`));
      assert.equal(reply.code, 250);
      accepted.push(id);
    }
    // The very moment the last 250 arrived: no graceful anything.
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');

    const second = await startProcess({ DATA_DIR: dir });
    running.push(second);
    const res = await request(second.httpUrl, '/api/mails?limit=100&offset=0', { jwt });
    assert.equal(res.status, 200);
    assert.equal(res.json.count, accepted.length);
    const ids = (res.json.results as { message_id: string }[]).map((m) => m.message_id).sort();
    assert.deepEqual(ids, [...accepted].sort(), 'every accepted mail stored exactly once');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, 'SIGTERM stops the service gracefully with exit code 0');
  });
});
