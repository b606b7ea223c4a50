// 7. Restart: how long `npm start` takes to listen on a checkout whose install and
// build are current (scripts/setup.mjs skips both), side by side with starting the
// server directly (node dist/main.js with the same flags), alternating. Target: under
// 2 s; the difference is what npm and the stamp check add.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { ROOT, SERVER_MAIN, SERVER_NODE_FLAGS } from './lib/paths.js';
import { makeTempDir, removeTempDir } from './lib/procs.js';
import { verdict, type Bench } from './lib/report.js';
import { fmt, median, round } from './lib/stats.js';

const TARGET_MS = 2000;

/** Milliseconds from spawning the command to its "HTTP on …" line; then it is stopped. */
async function timeToListen(command: string, args: string[], dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? dataDir, HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    return await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/HTTP on http:\/\/\S+, SMTP on port \d+/.test(out)) resolve(performance.now() - started);
      });
      void exited.then(() => reject(new Error(`${command} ${args.join(' ')} exited before listening`)));
    });
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await exited;
  }
}

export const startup: Bench = async (ctx) => {
  const rounds = ctx.quick ? 2 : 7;
  // The stamp must be current, or the first `npm start` would install and build.
  execFileSync(process.execPath, ['scripts/setup.mjs'], { cwd: ROOT, stdio: 'ignore' });
  const dir = makeTempDir('startup');
  const npm: number[] = [];
  const direct: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      direct.push(await timeToListen(process.execPath, [...SERVER_NODE_FLAGS, SERVER_MAIN], dir));
      npm.push(await timeToListen('npm', ['start', '--silent'], dir));
      ctx.log(`round ${i + 1}: npm start ${fmt(npm.at(-1)!)} ms, direct ${fmt(direct.at(-1)!)} ms`);
    }
  } finally {
    removeTempDir(dir);
  }
  const n = median(npm);
  const d = median(direct);
  return {
    rows: [
      {
        bench: 'startup',
        measure: 'restart with install and build current, to listening',
        ours: `${fmt(n)} ms (npm start)`,
        baseline: `${fmt(d)} ms (node dist/main.js)`,
        result: `${fmt(n)} ms, +${fmt(n - d)} ms over direct`,
        target: `< ${TARGET_MS} ms`,
        verdict: verdict(n < TARGET_MS),
        values: { npmStartMs: round(n), directMs: round(d), overheadMs: round(n - d) },
      },
    ],
    details: { rounds, npm, direct },
  };
};
