// A lean SMTP client for load generation: one EHLO per connection, then per
// message MAIL FROM + RCPT TO + DATA in one write (RFC 2920 PIPELINING), the
// prepared message bytes, and the final reply. Much cheaper per message than a
// full mailer, so on a 2-core machine the load generator leaves the CPU to the
// server being measured.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Reply {
  code: number;
  text: string;
  /** performance.now() when the reply was complete. */
  at: number;
  /** For a transaction's final reply: performance.now() when the message's last line (".") was written. */
  dataEnd?: number;
}

interface Waiter {
  resolve(r: Reply): void;
  reject(e: Error): void;
}

export class SmtpConnection {
  private buf = '';
  private waiters: Waiter[] = [];
  private failure: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => this.onData(d));
    const fail = (err: Error) => {
      this.failure ??= err;
      for (const w of this.waiters.splice(0)) w.reject(this.failure);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('SMTP connection closed')));
  }

  /** `localAddress`: the client's source address (another client, as the server counts them). */
  static async open(port: number, host = '127.0.0.1', localAddress?: string): Promise<SmtpConnection> {
    const socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const c = new SmtpConnection(socket);
    try {
      const greeting = await c.next();
      if (greeting.code !== 220) throw new Error(`SMTP greeting: ${greeting.text}`);
      c.socket.write('EHLO loadgen.bench\r\n');
      const ehlo = await c.next();
      if (ehlo.code !== 250) throw new Error(`EHLO: ${ehlo.text}`);
      return c;
    } catch (err) {
      // A refusing server (421 at connect) may keep the socket open; it is of no further use.
      socket.destroy();
      throw err;
    }
  }

  private onData(d: string): void {
    this.buf += d;
    let start = 0;
    for (;;) {
      const eol = this.buf.indexOf('\r\n', start);
      if (eol < 0) break;
      // A reply ends with a line "NNN " or "NNN" (continuation lines are "NNN-").
      const sep = this.buf.charCodeAt(start + 3);
      const last = eol - start === 3 || sep === 32;
      start = eol + 2;
      if (!last) continue;
      const text = this.buf.slice(0, eol);
      this.buf = this.buf.slice(start);
      start = 0;
      const lastLine = text.slice(text.lastIndexOf('\n') + 1);
      const reply = { code: Number(lastLine.slice(0, 3)), text, at: performance.now() };
      const w = this.waiters.shift();
      if (w) w.resolve(reply);
    }
  }

  /** The next complete reply. */
  next(): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * One transaction. `message` must not contain a line starting with "." and must
   * end with CRLF. Resolves with the final reply (250 expected); throws on any
   * other code.
   */
  async send(from: string, to: string, message: Buffer): Promise<Reply> {
    this.socket.write(`MAIL FROM:<${from}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
    const replies = [this.next(), this.next(), this.next()];
    const [mail, rcpt, data] = await Promise.all(replies);
    if (mail!.code !== 250 || rcpt!.code !== 250 || data!.code !== 354) {
      throw new Error(`SMTP refused: MAIL ${mail!.text} / RCPT ${rcpt!.text} / DATA ${data!.text}`);
    }
    this.socket.write(message);
    this.socket.write('.\r\n');
    const dataEnd = performance.now();
    const done = await this.next();
    if (done.code !== 250) throw new Error(`SMTP DATA answered ${done.text}`);
    return { ...done, dataEnd };
  }

  async close(): Promise<void> {
    if (this.failure) return;
    this.socket.write('QUIT\r\n');
    await Promise.race([this.next().catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
    this.socket.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One message over a connection of its own: connect, EHLO, the transaction, QUIT. */
export async function sendOnce(port: number, to: string, message: Buffer): Promise<Reply> {
  const c = await SmtpConnection.open(port);
  try {
    return await c.send('loadgen@bench.example.com', to, message);
  } finally {
    await c.close();
  }
}

export interface BlastOptions {
  port: number;
  connections: number;
  /** Send exactly this many messages… */
  messages?: number;
  /** …or as many as fit in this many seconds. */
  seconds?: number;
  /** Recipient of message i sent over connection c. */
  recipient(i: number, c: number): string;
  /** The bytes of message i (ending with CRLF, no line starting with "."). */
  message(i: number, to: string): Buffer;
  /** MAIL FROM: one sender, or the sender of message i. */
  from?: string | ((i: number) => string);
  /** Index of the first message (keeps Message-IDs unique across rounds). */
  offset?: number;
}

export interface BlastResult {
  messages: number;
  seconds: number;
  /** Messages per second, from the first write to the last 250. */
  rate: number;
}

/**
 * Sends messages over `connections` connections, each taking the next message as
 * soon as its previous one was answered (closed loop), until `messages` were sent
 * or `seconds` have passed. Connections are opened before the clock starts and
 * closed after it stops.
 */
export async function blast(opts: BlastOptions): Promise<BlastResult> {
  if ((opts.messages === undefined) === (opts.seconds === undefined)) throw new Error('blast: give messages or seconds');
  const conns = await Promise.all(Array.from({ length: opts.connections }, () => SmtpConnection.open(opts.port)));
  const sender = opts.from ?? 'loadgen@bench.example.com';
  const from = typeof sender === 'string' ? () => sender : sender;
  const offset = opts.offset ?? 0;
  const limit = opts.messages ?? Infinity;
  let next = 0;
  let done = 0;
  let last = 0;
  try {
    const t0 = performance.now();
    const end = opts.seconds === undefined ? Infinity : t0 + opts.seconds * 1000;
    await Promise.all(
      conns.map(async (conn, c) => {
        while (next < limit && performance.now() < end) {
          const i = offset + next++;
          const to = opts.recipient(i, c);
          const reply = await conn.send(from(i), to, opts.message(i, to));
          done++;
          last = reply.at;
        }
      }),
    );
    const seconds = ((last || performance.now()) - t0) / 1000;
    return { messages: done, seconds, rate: done / seconds };
  } finally {
    await Promise.all(conns.map((c) => c.close().catch(() => c.destroy())));
  }
}

/** Resolves once a server greets on `port` (a connection opened and closed), polling every `everyMs`; throws after `attempts`. */
export async function untilGreets(port: number, attempts: number, everyMs: number, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      const c = await SmtpConnection.open(port);
      await c.close();
      return;
    } catch (err) {
      if (i >= attempts) throw new Error(`${what} did not greet on ${port}: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

