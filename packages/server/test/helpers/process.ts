// Runs the built service (dist/main.js) as a real child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  httpUrl: string;
  smtpPort: number;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Starts the built service; `wrapper` runs it under another command (e.g. strace and its options). */
export function startProcess(env: Record<string, string>, wrapper: string[] = []): Promise<ServiceProcess> {
  const [command, ...args] = [...wrapper, process.execPath, MAIN];
  const child = spawn(command!, args, {
    // DNS_SERVERS: as in the in-process harness, the checks never ask the machine's resolvers.
    env: { PATH: process.env['PATH'] ?? '', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', LOG_LEVEL: 'warn', DNS_SERVERS: '127.0.0.1:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /HTTP on (http:\/\/\S+), SMTP on port (\d+)/.exec(out);
      if (m) resolve({ child, httpUrl: m[1]!.replace(/,$/, ''), smtpPort: Number(m[2]), exited });
    });
    void exited.then((code) => reject(new Error(`service exited (${code}) before listening: ${err || out}`)));
  });
}

/** Runs the service expecting it to refuse to start; returns exit code and stderr. */
export async function runExpectingFailure(env: Record<string, string>): Promise<{ code: number | string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env['PATH'] ?? '', HTTP_PORT: '0', SMTP_PORT: '0', HTTP_HOST: '127.0.0.1', SMTP_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | string>((resolve) => child.once('exit', (c, s) => resolve(c ?? s ?? -1)));
  clearTimeout(timer);
  return { code, stderr };
}
