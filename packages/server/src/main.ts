#!/usr/bin/env node
// Process entry (the temp-inbox-server command): read config, start, stop cleanly on
// SIGINT/SIGTERM. `temp-inbox-server backup <file>` takes an online backup instead.
import { ConfigError, loadConfig } from './config/index.js';
import { startServer } from './server.js';
import { BackupError, backupStore } from './storage/index.js';
import { leaveYoungGenerationsToWorkers } from './workers/worker-heap.js';

const USAGE = `Usage: temp-inbox-server            start the service (configured by environment variables, see README)
       temp-inbox-server backup FILE  copy the SQLite store in DATA_DIR to FILE while the service runs
`;
const [command, ...args] = process.argv.slice(2);
if (command === '--help' || command === 'help') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (command !== undefined && command !== 'backup') {
  process.stderr.write(`temp-inbox: unknown command "${command}".\n${USAGE}`);
  process.exit(2);
}

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`temp-inbox: ${err.message}\n`);
  process.exit(2);
}

if (command === 'backup') {
  if (args.length !== 1 || !args[0]) {
    process.stderr.write(`temp-inbox: backup takes exactly one argument, the file to write.\n${USAGE}`);
    process.exit(2);
  }
  try {
    const { bytes, mails } = backupStore(config.storage, args[0]);
    process.stdout.write(`temp-inbox: backup of ${mails} mails (${bytes} bytes) written to ${args[0]}.\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`temp-inbox: backup failed: ${err instanceof BackupError ? err.message : (err as Error).message}\n`);
    process.exit(1);
  }
}

leaveYoungGenerationsToWorkers();
// One line, no stack: a StartupError names the variable to fix (startup-errors.ts).
const server = await startServer(config).catch((err: unknown) => {
  process.stderr.write(`temp-inbox: could not start: ${oneLine(err)}\n`);
  process.exit(1);
});
const at = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host || '0.0.0.0'}:${port}`;
process.stdout.write(
  `temp-inbox: HTTP on ${server.httpUrl}, SMTP on port ${server.smtpPort}, domains ${(await server.mail.domains.activeDomains()).join(', ') || '(none active)'} ` +
    `(listening on ${at(config.http.host, server.httpPort)} and ${at(config.smtp.host, server.smtpPort)}, storage ${server.store.kind})\n`,
);

/** How long stop() may take: SMTP's 5 s close timeout, then HTTP and storage. */
const STOP_DEADLINE_MS = 10_000;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stdout.write(`temp-inbox: ${signal} received: stopping (SMTP sessions get up to 5 s to finish, then HTTP and storage close)\n`);
    const force = setTimeout(() => {
      process.stderr.write(`temp-inbox: did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting anyway\n`);
      process.exit(1);
    }, STOP_DEADLINE_MS);
    force.unref();
    server.stop().then(
      (r) => {
        process.stdout.write(
          `temp-inbox: stopped in ${r.ms} ms: closed SMTP (${plural(r.smtpSessions, 'session')} ended), HTTP (${plural(r.httpRequests, 'request')} finished), storage (${server.store.kind})\n`,
        );
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`temp-inbox: stopping failed: ${oneLine(err)}\n`);
        process.exit(1);
      },
    );
  });
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, ' ');
}
