// `npm start` on a checkout whose dependencies and build are current skips install
// and build (scripts/setup.mjs compares a stamp of the lockfile and the sources)
// and listens soon after: what an operator's restart costs. `npm test` ran the same
// setup just before this suite, so the stamp is current here; run on its own after a
// source changed, the case is skipped (it would install and build), except under
// REQUIRE_SERVICES=1 (CI), where it fails instead. How long it takes is
// printed here, beside the server started directly; it is judged by the startup bench
// (bench/src/startup.ts, target under 2 s), where rounds alternate on a quiet host.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmp } from '../helpers/harness.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** Where we aim: listening within 2 s on a restart (printed; the startup bench judges it). */
const RESTART_MS = 2000;

/** Runs a command until it prints that it listens; resolves with the milliseconds that took, and stops it. */
async function timeToListen(command: string, args: string[], dir: string): Promise<{ ms: number; stderr: string }> {
  const started = performance.now();
  const child = spawn(command, args, {
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
    const ms = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/HTTP on http:\/\/\S+, SMTP on port \d+/.test(out)) resolve(performance.now() - started);
      });
      void exited.then((code) => reject(new Error(`${command} exited (${code}) before listening: ${err || out}`)));
    });
    return { ms, stderr: err };
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

describe('npm start on a current checkout', () => {
  it('skips install and build and starts the server in the same process', async (t) => {
    const check = spawnSync(process.execPath, ['scripts/setup.mjs', '--check'], { cwd: ROOT, encoding: 'utf8' });
    if (check.status !== 0) {
      const why = `the checkout's setup stamp is not current (${check.stderr.trim()}); \`npm test\` runs \`npm run setup\` first`;
      assert.notEqual(process.env['REQUIRE_SERVICES'], '1', why);
      t.skip(why);
      return;
    }
    const dir = tmp('temp-inbox-restart-');
    try {
      const direct = await timeToListen(process.execPath, ['--min-semi-space-size=8', '--max-semi-space-size=8', 'packages/server/dist/main.js'], dir);
      const npm = await timeToListen('npm', ['start', '--silent'], dir);
      t.diagnostic(`npm start listened after ${npm.ms.toFixed(0)} ms (aim: ${RESTART_MS} ms); the server started directly, ${direct.ms.toFixed(0)} ms`);
      assert.match(npm.stderr, /dependencies and build are up to date/);
      assert.doesNotMatch(npm.stderr, /installing dependencies and building/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
