// Runs the service from its source (src/main.ts through tsx) as a real child process,
// for tests of what the command itself prints and how it exits; no build needed. Under
// npm test, which builds first (TEMP_INBOX_WORKERS=dist: workers/module-worker.ts), the
// same code runs from the build, without tsx's start-up in the process and its workers.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const MAIN_SOURCE = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const MAIN_BUILT = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const fromBuild = () => process.env['TEMP_INBOX_WORKERS'] === 'dist' && existsSync(MAIN_BUILT);

export interface SourceProcess {
  child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) on the process's exit event. */
  exited: Promise<number | string>;
}

/**
 * Starts `temp-inbox-server` on free ports of 127.0.0.1 with `env` on top; DATA_DIR must be
 * given. `wrapper` runs it under another command (e.g. setpriv, as another user).
 */
export function spawnService(env: Record<string, string>, wrapper: string[] = []): SourceProcess {
  const [command, ...args] = [...wrapper, process.execPath, ...(fromBuild() ? [MAIN_BUILT] : ['--import', 'tsx', MAIN_SOURCE])];
  const child = spawn(command!, args, {
    env: {
      PATH: process.env['PATH'] ?? '',
      // pg's default user name, as the parent's (helpers/services.ts).
      ...(process.env['PGUSER'] ? { PGUSER: process.env['PGUSER'] } : {}),
      ...(process.env['USER'] ? { USER: process.env['USER'] } : {}),
      ...(process.env['TEMP_INBOX_WORKERS'] ? { TEMP_INBOX_WORKERS: process.env['TEMP_INBOX_WORKERS'] } : {}),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: '0',
      LOG_LEVEL: 'warn',
      DNS_SERVERS: '127.0.0.1:1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // 'close' rather than 'exit': the output is read to its end before the promise resolves.
  const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for the start line; returns the HTTP URL and SMTP port it names. */
export async function listening(p: SourceProcess, ms = 60_000): Promise<{ httpUrl: string; smtpPort: number }> {
  const end = Date.now() + ms;
  for (;;) {
    const m = /HTTP on (http:\/\/[^\s,]+), SMTP on port (\d+)/.exec(p.stdout());
    if (m) return { httpUrl: m[1]!, smtpPort: Number(m[2]) };
    if (p.child.exitCode !== null || Date.now() > end) throw new Error(`the service did not start: ${p.stderr() || p.stdout()}`);
    await Promise.race([new Promise((r) => p.child.stdout!.once('data', r)), p.exited, new Promise((r) => setTimeout(r, 1000))]);
  }
}
