// When a new SMTP connection is greeted. smtp-server pauses a fixed 100 ms before its
// 220, so that a client that talks before the greeting (an "early talker", a trait of
// some spam software) gets 421 "You talk too soon". Every connection pays those
// 100 ms: an application that opens a connection per mail (nodemailer without a pool,
// most test suites) waited 100 ms for each mail before sending a byte of it. Here the
// pause is SMTP_GREETING_DELAY, 0 by default: the greeting is sent as the connection
// is accepted, as Postfix (without postscreen), Mailpit and Inbucket do. An operator
// who wants early talkers refused sets a pause (Postfix's postscreen waits 6 s).
// docs/decisions.md "SMTP greeting".
//
// smtp-server has no option for it (3.21.6): its connect() creates the connection and
// starts the fixed timer, which then calls the connection's connectionReady(). The
// connection is caught as connect() adds it to the server's connections, and its
// connectionReady() is called after our pause instead; the fixed timer finds a no-op.
// smtp-server is pinned to an exact version, and smtp-greeting.test.ts fails if a
// later one greets differently (twice, late, or without refusing an early talker).
import type { SMTPServer } from 'smtp-server';

interface Greetable {
  connectionReady(): void;
}

/**
 * Runs `connect` (smtp-server's own, which creates one connection) and greets the
 * connection it created after `delayMs` (0: at once) rather than after 100 ms.
 * A connection that was refused meanwhile (closed) is not greeted: smtp-server checks that.
 * Answers the connection (smtp-server's SMTPConnection), or undefined when none was made.
 */
export function connectWithGreeting(server: SMTPServer, delayMs: number, connect: () => void): unknown {
  const connections = server.connections as unknown as Set<Greetable>;
  let created: Greetable | undefined;
  connections.add = function (this: Set<Greetable>, connection: Greetable) {
    created = connection;
    return Set.prototype.add.call(this, connection);
  };
  try {
    connect();
  } finally {
    // The own property goes; Set.prototype.add is what the Set has again.
    delete (connections as { add?: unknown }).add;
  }
  if (!created) return undefined;
  const ready = created.connectionReady.bind(created);
  created.connectionReady = () => undefined;
  if (delayMs === 0) ready();
  else setTimeout(ready, delayMs).unref();
  return created;
}
