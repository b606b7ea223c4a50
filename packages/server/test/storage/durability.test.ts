// SQLITE_SYNCHRONOUS takes FULL or NORMAL (any case) and nothing else: OFF, or
// SQLite's other levels and numbers, would acknowledge mail that a crash can lose,
// so they are refused before anything starts, with one line naming the variable.
// (What each accepted value does on disk is traced with strace in wal-sync.test.ts:
// the service's connection always commits with synchronous=NORMAL, and FULL adds
// an fdatasync of the WAL off the event loop before each 250.)
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { tmp } from '../helpers/harness.js';

const MAIN_SOURCE = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const REFUSED = 'SQLITE_SYNCHRONOUS is invalid: expected FULL or NORMAL.';

describe('SQLITE_SYNCHRONOUS', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('defaults to FULL; FULL and NORMAL are accepted in any case and with surrounding spaces', () => {
    assert.equal(loadConfig({}).storage.sqliteSynchronous, 'FULL');
    for (const [raw, value] of [
      ['FULL', 'FULL'],
      ['full', 'FULL'],
      ['NORMAL', 'NORMAL'],
      [' Normal ', 'NORMAL'],
    ] as const) {
      assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: raw }).storage.sqliteSynchronous, value, JSON.stringify(raw));
    }
  });

  for (const raw of ['OFF', 'off', 'EXTRA', '0', '1', '2', '3', 'FULLY', 'NORMAL;', '']) {
    it(`refuses ${JSON.stringify(raw)} with exactly "${REFUSED}"`, () => {
      assert.throws(
        () => loadConfig({ SQLITE_SYNCHRONOUS: raw }),
        (err: unknown) => err instanceof ConfigError && err.message === REFUSED,
      );
    });
  }

  it('the service refuses SQLITE_SYNCHRONOUS=OFF at start: exit code 2, that one line on stderr, no database created', async () => {
    const parent = tmp('temp-inbox-durability-');
    dirs.push(parent);
    const dataDir = join(parent, 'data');
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN_SOURCE], {
      env: { PATH: process.env['PATH'] ?? '', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', DATA_DIR: dataDir, SQLITE_SYNCHRONOUS: 'OFF' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | string>((resolve) => child.once('exit', (c, s) => resolve(c ?? s ?? -1)));
    clearTimeout(timer);
    assert.equal(code, 2, stderr);
    assert.equal(stderr, `temp-inbox: ${REFUSED}\n`);
    assert.equal(stdout, '');
    assert.equal(existsSync(dataDir), false, 'nothing was created in DATA_DIR');
  });
});
