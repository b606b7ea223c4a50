// startTempInbox(): the whole service in the calling process, for a test suite —
// SQLite in a fresh temporary directory (removed by stop()), free ports on
// 127.0.0.1, rate limits off, logs silent. `import { startTempInbox } from '@temp-inbox/server'`.
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from './config/index.js';
import { startServer } from './server.js';
import { StartupError } from './startup-errors.js';

export interface StartTempInboxOptions {
  /** The mail domain (MAIL_DOMAINS); default temp-inbox.localhost. */
  domain?: string;
  /** Where both listeners bind; default 127.0.0.1. */
  host?: string;
  /** HTTP port; default 0, a free one. */
  httpPort?: number;
  /** SMTP port; default 0, a free one. */
  smtpPort?: number;
  /** Log level (LOG_LEVEL); default silent. Logs go to stdout as JSON lines. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Any other configuration variable (docs/deploy.md "Configuration"), e.g. { MAIL_TTL: '1h' }; these win over the defaults above. */
  env?: Record<string, string>;
}

export interface TempInbox {
  /** The HTTP API and UI, e.g. http://127.0.0.1:41234 — the SDK's baseUrl. */
  url: string;
  /** The SMTP host to send test mail to (the bound address). */
  smtpHost: string;
  /** The SMTP port to send test mail to. */
  smtpPort: number;
  /** The default mail domain: addresses are <name>@<domain>. */
  domain: string;
  /** The temporary data directory (SQLite database, secrets); removed by stop(). */
  dataDir: string;
  /** Stops both listeners, closes the database and removes dataDir. A second call does nothing. */
  stop(): Promise<void>;
}

/** Starts a throw-away temp-inbox service; resolves once HTTP and SMTP both listen. */
export async function startTempInbox(options: StartTempInboxOptions = {}): Promise<TempInbox> {
  const host = options.host ?? '127.0.0.1';
  const dataDir = mkdtempSync(join(tmpdir(), 'temp-inbox-run-'));
  let server;
  try {
    const logLevel = options.env?.['LOG_LEVEL'] ?? options.logLevel ?? 'silent';
    const config = loadConfig({
      HTTP_HOST: host,
      HTTP_PORT: String(options.httpPort ?? 0),
      SMTP_HOST: host,
      SMTP_PORT: String(options.smtpPort ?? 0),
      MAIL_DOMAINS: options.domain ?? 'temp-inbox.localhost',
      RATE_LIMITS: 'off',
      LOG_LEVEL: logLevel,
      ...options.env,
      DATA_DIR: dataDir,
    });
    server = await startServer(config, { logger: pino({ level: config.log.level }) });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    // The option this caller passed, beside the variable the message names.
    if (err instanceof StartupError && (err.variable === 'HTTP_PORT' || err.variable === 'SMTP_PORT')) {
      err.message = `${err.variable === 'HTTP_PORT' ? 'httpPort' : 'smtpPort'} (${err.variable})${err.message.slice(err.variable.length)}`;
    }
    throw err;
  }
  const running = server;
  // Requests in progress on each HTTP connection, so that stop() can tell idle ones.
  const sockets = new Map<Socket, number>();
  running.http.server.on('connection', (socket: Socket) => {
    sockets.set(socket, 0);
    socket.once('close', () => sockets.delete(socket));
  });
  running.http.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (sockets.has(socket)) sockets.set(socket, sockets.get(socket)! + 1);
    res.once('close', () => {
      if (sockets.has(socket)) sockets.set(socket, Math.max(0, sockets.get(socket)! - 1));
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    url: running.httpUrl,
    smtpHost: host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host,
    smtpPort: running.smtpPort,
    domain: running.config.mail.domains[0]!,
    dataDir,
    stop() {
      stopping ??= (async () => {
        // An HTTP client may hold connections that carry no request (Node's fetch opens
        // one again after an aborted request, e.g. a wait that timed out), and the
        // service's graceful stop would wait them out (up to the 72 s keep-alive).
        // Requests in flight still finish; idle connections are closed until it is down.
        const closeIdle = setInterval(() => {
          for (const [socket, requests] of sockets) if (requests === 0) socket.destroy();
        }, 50);
        try {
          await running.stop();
        } finally {
          clearInterval(closeIdle);
          rmSync(dataDir, { recursive: true, force: true });
        }
      })();
      return stopping;
    },
  };
}
