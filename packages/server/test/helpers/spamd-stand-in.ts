// A spamd stand-in on loopback: spamd's protocol (REPORT SPAMC/1.5, threshold 5), with the
// score the test chooses, answered at once, when the test lets each scan go (`hold`, then
// `release()`), or never (`silent`). For the cases a real spamd cannot give (a chosen score,
// a scan that never answers); the real one is in spam-scanners.ts.
import { createServer, type Server, type Socket } from 'node:net';

export interface SpamdStandIn {
  port: number;
  /** Scans asked for so far (the whole request read). */
  asked: number;
  /** Scans wait for release() while set. */
  hold: boolean;
  /** Scans are never answered while set. */
  silent: boolean;
  score: number;
  /** Answers every held scan. */
  release(): void;
  close(): Promise<void>;
}

function answer(s: Socket, score: number): void {
  const body = ` pts rule name              description\r\n---- ---------------------- ----------------------------\r\n ${score.toFixed(1)} STAND_IN               A rule of the stand-in\r\n`;
  s.end(`SPAMD/1.1 0 EX_OK\r\nContent-length: ${Buffer.byteLength(body)}\r\nSpam: False ; ${score.toFixed(1)} / 5.0\r\n\r\n${body}`);
}

export async function startSpamdStandIn(score: number): Promise<SpamdStandIn> {
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  // Half-open: the client ends its side after the message, as spamc does, and still reads the answer.
  const server: Server = createServer({ allowHalfOpen: true }, (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    let got = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const head = got.indexOf('\r\n\r\n');
      const length = /Content-length: (\d+)/i.exec(got.toString('latin1'))?.[1];
      if (head < 0 || length === undefined || got.length < head + 4 + Number(length)) return;
      s.removeAllListeners('data');
      standIn.asked++;
      if (standIn.silent) return;
      const now = standIn.score;
      if (standIn.hold) held.push(() => answer(s, now));
      else answer(s, now);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const standIn: SpamdStandIn = {
    port: (server.address() as { port: number }).port,
    asked: 0,
    hold: false,
    silent: false,
    score,
    release: () => held.splice(0).forEach((go) => go()),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return standIn;
}
