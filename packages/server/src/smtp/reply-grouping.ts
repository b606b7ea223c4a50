// Replies to commands that arrived together leave together. A client that pipelines
// (RFC 2920) sends MAIL FROM, RCPT TO and DATA in one packet; smtp-server answers each
// with a write of its own, so three system calls, three packets and three reads for the
// client. RFC 2920 §3.2 lets a server hold the replies to a group of commands and send
// them at once: here the connection's socket is corked while the bytes that arrived in
// one read are handled (the hooks' answers that come back in the same turn, as a
// cached recipient's does, included) and uncorked right after, before any new I/O is
// waited for, so no reply waits for anything but the commands read with it. A reply
// that needs I/O first (the 250 after the message is stored) goes out on its own, at once.
//
// STARTTLS is left alone: its 220 must be on the wire, as plain text, before the TLS
// handshake owns the socket, so bytes holding it are never corked (RFC 3207 §5: it
// ends its pipeline group). After the upgrade the plain socket reads nothing more.
// Without a certificate the server offers no STARTTLS (it is refused like any unknown
// command and the session stays plain), so reads are not looked at for it: each had
// been made a string to be searched, 3 KB of garbage a 3 KB mail.
import type { Socket } from 'node:net';

const STARTTLS = /starttls/i;

/**
 * Corks `socket` for the turn in which each chunk of commands it read is handled.
 * `startTls`: the server offers STARTTLS, and a chunk that holds it is not corked.
 */
export function groupReplies(socket: Socket, startTls: boolean): void {
  socket.prependListener('data', (chunk: Buffer | string) => {
    if (socket.writableCorked > 0 || chunk.length > 4096 || (startTls && STARTTLS.test(chunk.toString('latin1')))) return;
    socket.cork();
    setImmediate(() => socket.uncork());
  });
}
