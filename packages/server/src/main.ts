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
    const { bytes, mails } = backupStore(config, args[0]);
    process.stdout.write(`temp-inbox: backup of ${mails} mails (${bytes} bytes) written to ${args[0]}.\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`temp-inbox: backup failed: ${err instanceof BackupError ? err.message : (err as Error).message}\n`);
    process.exit(1);
  }
}

leaveYoungGenerationsToWorkers();
const server = await startServer(config).catch((err: Error) => {
  process.stderr.write(`temp-inbox: could not start: ${err.message}\n`);
  process.exit(1);
});
process.stdout.write(`temp-inbox: HTTP on ${server.httpUrl}, SMTP on port ${server.smtpPort}, domains ${config.mailDomains.join(', ')}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
