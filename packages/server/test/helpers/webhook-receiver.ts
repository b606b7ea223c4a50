// A real webhook receiver for the webhook suites: an HTTP server on a loopback address
// that records every POST, verifies its signature with the standardwebhooks library (as a
// receiver following the specification would), and answers as the test tells it to —
// 200, a failure, a redirect, an endless body, or nothing at all. It can be stopped and
// started again on the same port, as a receiver being restarted mid-retry.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed JSON body. */
  event: any;
  /** Whether standardwebhooks verified it with the receiver's secret (undefined: no secret given). */
  verified: boolean | undefined;
  /** The local address the request came in on (the address the sender connected to). */
  localAddress: string;
}

/** What the receiver does with a POST: answer with a status (and a body), or hold it unanswered. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang' | 'endless';

export interface Receiver {
  /** http://host:port + path, the host bracketed for IPv6. */
  url(path?: string): string;
  port: number;
  posts: ReceivedPost[];
  /** The secret posts are verified with (set it after the PUT that made it). */
  secret: string | undefined;
  /** How the next POSTs are answered (default: 200). */
  answer: (post: ReceivedPost, index: number) => Answer;
  /** Resolves once `n` POSTs have arrived in all (10 s at most). */
  untilPosts(n: number, timeoutMs?: number): Promise<ReceivedPost[]>;
  /** Bytes written to endless answers before the sender closed them. */
  endlessWritten: number[];
  stop(): Promise<void>;
  /** Listens again on the same address and port. */
  restart(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1', port = 0): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const waiters: (() => void)[] = [];
  let server: Server | undefined;
  const receiver: Receiver = {
    url: (path = '/hook') => `http://${host.includes(':') ? `[${host}]` : host}:${receiver.port}${path}`,
    port,
    posts: [],
    secret: undefined,
    answer: () => ({ status: 200, body: 'ok' }),
    endlessWritten: [],
    untilPosts(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (receiver.posts.length >= n) {
            clearTimeout(timer);
            resolve(receiver.posts);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => reject(new Error(`${receiver.posts.length} webhook POSTs, not ${n}, after ${timeoutMs} ms`)), timeoutMs);
        if (!check()) {
          const wait = () => {
            if (!check()) waiters.push(wait);
          };
          waiters.push(wait);
        }
      });
    },
    async stop() {
      if (!server) return;
      const s = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async restart() {
      await listen();
    },
  };

  const respond = (res: ServerResponse, answer: Answer) => {
    if (answer === 'hang') return;
    if (answer === 'endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let written = 0;
      const index = receiver.endlessWritten.push(0) - 1;
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) receiver.endlessWritten[index] = written += chunk.length;
        if (!res.destroyed) {
          receiver.endlessWritten[index] = written += chunk.length;
          res.once('drain', pump);
        }
      };
      pump();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
    res.end(answer.body ?? '');
  };

  function listen(): Promise<void> {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let event: unknown;
        try {
          event = JSON.parse(body);
        } catch {
          event = undefined;
        }
        let verified: boolean | undefined;
        if (receiver.secret !== undefined) {
          try {
            new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
            verified = true;
          } catch {
            verified = false;
          }
        }
        const post: ReceivedPost = { path: req.url ?? '', headers: req.headers, body, event, verified, localAddress: req.socket.localAddress ?? '' };
        const index = receiver.posts.push(post) - 1;
        waiters.splice(0).forEach((w) => w());
        respond(res, receiver.answer(post, index));
      });
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(receiver.port, host, () => {
        receiver.port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  }
  await listen();
  return receiver;
}
