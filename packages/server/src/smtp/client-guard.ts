// Refusing a connection when it is accepted, before any SMTP state exists for it:
// a client past its cap costs one short write and a closed descriptor, so it can
// neither fill the descriptor table nor memory.
import type { Socket } from 'node:net';

/** Refuses a socket with one reply line (RFC 5321 §3.1: 421 instead of the greeting) and closes it. */
export function refuseSocket(socket: Socket, line: string): void {
  socket.on('error', () => undefined);
  socket.end(`${line}\r\n`);
  // A client that never reads must not keep the descriptor.
  setTimeout(() => socket.destroy(), 2000).unref();
}
