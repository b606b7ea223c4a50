// A Server-Sent Events client for tests: parses the stream as the WHATWG spec
// does (event, data, id, retry fields; comment lines) and lets a test await the
// next event of a type.
import { request as httpRequest, type IncomingMessage } from 'node:http';

export interface StreamEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export interface EventStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body of a refused request (status not 200). */
  body: string;
  events: StreamEvent[];
  comments: string[];
  retry: number | undefined;
  /** The next event not yet taken by next() (of this type, when given). */
  next(type?: string, timeoutMs?: number): Promise<StreamEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** `localAddress` picks the client's address (127.0.0.2, …) for the per-client limits. */
export function openEventStream(base: string, path: string, headers: Record<string, string> = {}, localAddress?: string): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers: { accept: 'text/event-stream', ...headers }, agent: false, localAddress }, (res) => {
      const events: StreamEvent[] = [];
      const comments: string[] = [];
      let taken = 0;
      const waiters: (() => void)[] = [];
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      let isEnded = false;
      const stream: EventStream = {
        status: res.statusCode!,
        headers: res.headers,
        body: '',
        events,
        comments,
        retry: undefined,
        ended,
        close: () => req.destroy(),
        async next(type, timeoutMs = 5000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            for (let i = taken; i < events.length; i++) {
              if (type === undefined || events[i]!.event === type) {
                taken = i + 1;
                return events[i]!;
              }
            }
            if (isEnded) throw new Error(`the stream ended before a${type ? ` "${type}"` : 'n'} event`);
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`no${type ? ` "${type}"` : ''} event within ${timeoutMs} ms`);
            await new Promise<void>((r) => {
              const t = setTimeout(r, left);
              waiters.push(() => {
                clearTimeout(t);
                r();
              });
            });
          }
        },
      };
      const wake = () => waiters.splice(0).forEach((w) => w());
      const finish = () => {
        isEnded = true;
        endedResolve();
        wake();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        res.on('data', (d: string) => (stream.body += d));
        res.on('end', () => resolve(stream));
        return;
      }
      let buf = '';
      let event: { event?: string; data?: string[]; id?: string } = {};
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
          if (line === '') {
            if (event.data) events.push({ event: event.event ?? 'message', data: event.data.join('\n'), id: event.id });
            event = {};
            continue;
          }
          if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event.event = value;
          else if (field === 'data') (event.data ??= []).push(value);
          else if (field === 'id') event.id = value;
          else if (field === 'retry') stream.retry = Number(value);
        }
        wake();
      });
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}
