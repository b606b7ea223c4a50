// `npm start` on a checkout whose dependencies and build are current skips install
// and build (scripts/setup.mjs compares a stamp of the lockfile and the sources)
// and listens soon after: what an operator's restart costs. `npm test` ran the same
// setup just before this suite, so the stamp is current here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmp } from './helpers/harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The target of the operations issue: listening within 2 s on a restart. */
const RESTART_MS = 2000;

describe('npm start on a current checkout', () => {
  it(`skips install and build and listens within ${RESTART_MS} ms`, async (t) => {
    const dir = tmp('temp-inbox-restart-');
    const started = performance.now();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      detached: true, // its own process group: npm and the server stop together
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? dir, HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const listeningMs = await new Promise<number>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/HTTP on http:\/\/\S+, SMTP on port \d+/.test(out)) resolve(performance.now() - started);
        });
        void exited.then((code) => reject(new Error(`npm start exited (${code}) before listening: ${err || out}`)));
      });
      t.diagnostic(`npm start listened ${listeningMs.toFixed(0)} ms after it was run`);
      assert.match(err, /dependencies and build are up to date/);
      assert.doesNotMatch(err, /installing dependencies and building/);
      assert.ok(listeningMs < RESTART_MS, `listening after ${listeningMs.toFixed(0)} ms`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
