// Per-client connection caps, applied when a socket is accepted and before any
// SMTP state exists for it: a client past its cap costs one short write and a
// closed descriptor, so it can neither fill the descriptor table nor memory.
import type { Socket } from 'node:net';
import { clientKey } from '../limits/window-limiter.js';

export interface ClientGuard {
  /** Counts a new connection from `ip`; false when that client is at its cap. The returned release is idempotent. */
  admit(ip: string): (() => void) | false;
  /** Open connections of one client (for tests and metrics). */
  open(ip: string): number;
}

export function createClientGuard(maxPerClient: number): ClientGuard {
  const open = new Map<string, number>();
  return {
    admit(ip) {
      const key = clientKey(ip);
      const n = open.get(key) ?? 0;
      if (n >= maxPerClient) return false;
      open.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      };
    },
    open: (ip) => open.get(clientKey(ip)) ?? 0,
  };
}

/** Refuses a socket with one reply line (RFC 5321 §3.1: 421 instead of the greeting) and closes it. */
export function refuseSocket(socket: Socket, line: string): void {
  socket.on('error', () => undefined);
  socket.end(`${line}\r\n`);
  // A client that never reads must not keep the descriptor.
  setTimeout(() => socket.destroy(), 2000).unref();
}
