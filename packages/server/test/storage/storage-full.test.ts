// A full disk under DATA_DIR (docs/security.md "Storage"): a small tmpfs holds the
// SQLite store, a file fills what is left, and every write that cannot be stored is
// a 503 with a plain reason (never a 500), /health_check reports the storage full,
// and SMTP defers new mail. Freeing space brings it all back. Needs root to mount a
// tmpfs; skipped (with the reason) where mounting is not allowed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStorageFull } from '../../src/storage/storage-state.js';
import { client, createAddress, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';

const mount = mkdtempSync(join(tmpdir(), 'temp-inbox-full-'));
let mounted = false;
let skip: string | false = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mount], { stdio: 'pipe' });
  mounted = true;
} catch (err) {
  skip = `cannot mount a tmpfs here (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
}

/** Writes a file until the disk refuses more; returns its path. */
function fill(dir: string): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  try {
    for (const size of [256 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

/** One mail of 64 KiB; the reply after DATA. */
async function sendOnce(port: number, to: string): Promise<{ code: number; text: string }> {
  const smtp = await SmtpClient.connect(port);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<${to}>`, 250],
      ['DATA', 354],
    ]);
    return await smtp.data(`Subject: filling\r\n\r\n${`${'f'.repeat(1022)}\r\n`.repeat(64)}`);
  } finally {
    await smtp.quit();
  }
}

describe('storage: what counts as a full disk', () => {
  it('SQLITE_FULL, ENOSPC, EDQUOT and PostgreSQL\'s 53100, also as a cause; nothing else', () => {
    for (const code of ['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100']) assert.ok(isStorageFull(Object.assign(new Error('x'), { code })), code);
    assert.ok(isStorageFull(new Error('sync failed', { cause: Object.assign(new Error('x'), { code: 'ENOSPC' }) })));
    for (const err of [new Error('x'), Object.assign(new Error('x'), { code: 'SQLITE_BUSY' }), Object.assign(new Error('x'), { code: '23505' }), undefined, 'ENOSPC']) assert.equal(isStorageFull(err), false);
  });
});

describe('storage: a full disk', { skip }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ DISK_MIN_FREE: '0' }, mount);
  });
  after(async () => {
    await server?.close();
    if (mounted) execFileSync('umount', [mount]);
    rmdirSync(mount);
  });

  it('a write that cannot be stored is 503 with a plain reason, /health_check says full (503), SMTP defers; freeing space recovers', async () => {
    const api = client(server);
    const { address, jwt } = await createAddress(server);
    const filler = fill(mount);
    // SQLite may still find room in pages it has; the writes run out of it soon. A mail
    // that cannot be stored is a 451 (the sender keeps it and retries), never a 250.
    let reply = await sendOnce(server.smtpPort, address);
    for (let i = 0; i < 50 && reply.code === 250; i++) reply = await sendOnce(server.smtpPort, address);
    assert.match(reply.text, /^451 4\.3\.0 /);
    let res = await api('/api/new_address', { method: 'POST', body: {} });
    for (let i = 0; i < 50 && res.status === 200; i++) res = await api('/api/new_address', { method: 'POST', body: {} });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(res.text, 'The server cannot store anything now: its disk is full. Try again later.');
    assert.equal(res.headers.get('retry-after'), '60');

    const health = await api('/health_check');
    assert.equal(health.status, 503);
    assert.deepEqual({ status: health.json.status, storage: health.json.storage }, { status: 'error', storage: 'full' });
    // Reading still works.
    assert.equal((await api('/api/mails?limit=1&offset=0', { jwt })).status, 200);

    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO client.test');
    assert.match((await smtp.command('MAIL FROM:<s@example.org>')).text, /^452 4\.3\.1 Insufficient storage here/);
    await smtp.quit();

    rmSync(filler);
    // The free space is read at most once a second.
    let again = await api('/health_check');
    for (const end = Date.now() + 10_000; again.status !== 200 && Date.now() < end; again = await api('/health_check')) await new Promise((r) => setTimeout(r, 100));
    assert.equal(again.status, 200);
    assert.equal(again.json.storage, 'ok');
    assert.equal((await api('/api/new_address', { method: 'POST', body: {} })).status, 200);
  });
});
