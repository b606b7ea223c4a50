// Sessions that hold a connection without sending mail (docs/security.md "SMTP"). smtp-server
// closes a connection only after 60 s without a byte, so a client could hold one for ever
// with a byte of an unfinished command every 30 s, or a NOOP every 50 s; a thousand such
// connections from a few hundred addresses fill SMTP_MAX_CLIENTS.
// - A command line must be complete within SMTP_COMMAND_TIMEOUT of the last one (the
//   greeting, or the end of a message, starts the count too): bytes alone are no progress.
// - Commands that move no mail (NOOP, RSET, VRFY, EXPN, HELP, HELO, EHLO) are counted,
//   and the count starts again at each MAIL FROM, which the per-client message limit
//   bounds. Past SMTP_MAX_JUNK_COMMANDS the session ends (Postfix's
//   smtpd_junk_command_limit). A pooled client's RSET between messages is one per MAIL.
// Both end the session with 421 and close it.
//
// smtp-server (pinned, 3.21.6) has no hook for each command: each connection's own
// _onCommand, which its parser calls for every line outside DATA, is wrapped here, and
// command-guard.test.ts fails if a later version stops calling it.
import { performance } from 'node:perf_hooks';

/** What this guard reads and calls of smtp-server's SMTPConnection. */
export interface GuardedConnection {
  _onCommand(command: Buffer, callback?: () => void): unknown;
  send(code: number, message: string): void;
  _closing?: boolean;
  _handlerPending?: boolean;
  _dataStream?: unknown;
}

export interface CommandGuardOptions {
  commandTimeoutMs: number;
  /** 0: no limit. */
  maxJunkCommands: number;
}

const JUNK = new Set(['NOOP', 'RSET', 'VRFY', 'EXPN', 'HELP', 'HELO', 'EHLO']);
/** How often connections are looked at, at most (a shorter timeout is looked at twice as often as it lasts). */
const SWEEP_MS = 5000;

export interface CommandGuard {
  watch(connection: GuardedConnection): void;
  forget(connection: GuardedConnection): void;
  close(): void;
}

export function createCommandGuard(opts: CommandGuardOptions): CommandGuard {
  const watched = new Map<GuardedConnection, { lastAt: number; junk: number }>();
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const [connection, state] of watched) {
        if (connection._closing) continue;
        // A message being received or decided on is progress; the next command is counted from its end.
        if (connection._handlerPending || connection._dataStream) state.lastAt = now;
        else if (now - state.lastAt > opts.commandTimeoutMs) {
          watched.delete(connection);
          connection.send(421, '4.4.2 Timeout waiting for a command; closing');
        }
      }
    },
    Math.max(100, Math.min(SWEEP_MS, opts.commandTimeoutMs / 2)),
  );
  sweep.unref();

  return {
    watch(connection) {
      const state = { lastAt: performance.now(), junk: 0 };
      watched.set(connection, state);
      const own = connection._onCommand.bind(connection);
      connection._onCommand = (command, callback) => {
        state.lastAt = performance.now();
        const name = command.toString('latin1', 0, Math.min(command.length, 5)).split(' ')[0]!.toUpperCase();
        if (name === 'MAIL') state.junk = 0;
        else if (JUNK.has(name) && opts.maxJunkCommands > 0 && ++state.junk > opts.maxJunkCommands) {
          watched.delete(connection);
          connection.send(421, '4.7.0 Too many commands without mail; closing');
          return undefined;
        }
        return own(command, callback);
      };
    },
    forget(connection) {
      watched.delete(connection);
    },
    close() {
      clearInterval(sweep);
      watched.clear();
    },
  };
}
