#!/usr/bin/env node
// Process entry: read config, start, stop cleanly on SIGINT/SIGTERM.
import { ConfigError, loadConfig } from './config/index.js';
import { startServer } from './server.js';

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`temp-inbox: ${err.message}\n`);
  process.exit(2);
}

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
