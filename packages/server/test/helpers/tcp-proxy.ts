// A TCP proxy a test puts between the service and PostgreSQL or Redis, to make the
// database misbehave the way networks do: freeze() stops forwarding in both
// directions (a peer that stops answering without closing), thaw() delivers what
// was held; cut() drops every connection and refuses new ones (the peer is gone),
// restore() accepts again on the same port.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Connections open through the proxy now. */
  readonly open: number;
  freeze(): void;
  thaw(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  held: { to: Socket; chunk: Buffer }[];
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let frozen = false;
  let server: Server;
  let port = 0;

  const forward = (pair: Pair, to: Socket) => (chunk: Buffer) => {
    if (frozen) pair.held.push({ to, chunk });
    else to.write(chunk);
  };

  const onConnection = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, upstream, held: [] };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', forward(pair, upstream));
    upstream.on('data', forward(pair, client));
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onConnection);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const dropAll = () => {
    for (const p of [...pairs]) {
      p.client.destroy();
      p.upstream.destroy();
    }
    pairs.clear();
  };

  await listen();
  return {
    get port() {
      return port;
    },
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    get open() {
      return pairs.size;
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const p of pairs) for (const { to, chunk } of p.held.splice(0)) to.write(chunk);
    },
    async cut() {
      const closed = stopListening();
      dropAll();
      await closed;
    },
    async restore() {
      await listen();
    },
    async close() {
      frozen = false;
      const closed = server.listening ? stopListening() : Promise.resolve();
      dropAll();
      await closed;
    },
  };
}
