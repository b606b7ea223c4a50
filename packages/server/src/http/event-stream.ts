// One open Server-Sent Events response, as GET /api/events (routes/push.ts) and the
// mail.tm-compatible Mercure stream (routes/mailtm/mercure.ts) serve it: the reply taken
// over from Fastify, the stream headers (after any the reply already had, such as CORS),
// a bounded backlog, a heartbeat, and one end that releases everything, whether the client
// left, stopped reading, the server is closing, or the route ended it.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamAdmission } from './stream-admission.js';

/** A stream whose client reads slower than this much backlog is closed. */
export const MAX_BACKLOG_BYTES = 1024 * 1024;
/** What EventSource waits before reconnecting (the `retry:` field). */
export const RECONNECT_MS = 2000;

export interface EventStreamOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  /** Admits the stream against the caps (refusing it throws, before anything is sent) and is told when it ends. */
  streams: StreamAdmission;
  /** The address whose events it carries. */
  address: { id: number; address: string };
  heartbeatMs: number;
  /** Written at each heartbeat (an SSE comment). */
  heartbeat: string;
  /** Also at each heartbeat: checks the stream may go on (the token, the address), and ends it if not. */
  stillAllowed: () => Promise<unknown>;
}

export interface EventStream {
  write(chunk: string): void;
  end(): void;
  /** Run when the stream ends, however it ends. */
  onEnd(cleanup: () => void): void;
}

export function openEventStream(opts: EventStreamOptions): EventStream {
  const { request, reply } = opts;
  const release = opts.streams.admit(request, opts.address.id, 'stream');
  reply.hijack();
  const res: ServerResponse = reply.raw;
  let ended = false;
  let heartbeat: NodeJS.Timeout | undefined;
  const cleanups: (() => void)[] = [];
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    for (const cleanup of cleanups) cleanup();
    release();
    if (!res.writableEnded) res.end();
  };
  const write = (chunk: string) => {
    if (ended) return;
    // A client that stopped reading is not allowed to grow our memory; the backlog is
    // judged before this chunk, so one large event alone never ends a reading client.
    const behind = res.writableLength > MAX_BACKLOG_BYTES;
    res.write(chunk);
    if (behind) {
      request.log.info({ address: opts.address.address }, 'event stream closed: the client is not reading');
      res.destroy();
      end();
    }
  };
  cleanups.push(opts.streams.onClose(end));
  res.on('close', end);
  // Headers set through the reply before it was taken over (CORS, when enabled).
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // Tells nginx and similar proxies not to buffer the stream.
    'x-accel-buffering': 'no',
  });
  if (!ended) {
    heartbeat = setInterval(() => {
      write(opts.heartbeat);
      opts.stillAllowed().catch(() => end());
    }, opts.heartbeatMs);
    heartbeat.unref();
  }
  return {
    write,
    end,
    onEnd(cleanup) {
      if (ended) cleanup();
      else cleanups.push(cleanup);
    },
  };
}
