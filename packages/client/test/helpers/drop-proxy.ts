// A TCP proxy in front of the service that can drop connections on purpose: the next
// N requests are cut (the client's socket reset) before they reach the service, or
// every open connection is cut at once (e.g. in the middle of a long poll).
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface DropProxy {
  url: string;
  /** Requests that reached the service. */
  forwarded: number;
  /** Cut the next n requests (counted by the first data of a request on a connection). */
  dropNext(n: number): void;
  /** Cut every connection open now. */
  cutAll(): void;
  close(): Promise<void>;
}

export async function startDropProxy(target: string): Promise<DropProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let drop = 0;
  const proxy: DropProxy = {
    url: '',
    forwarded: 0,
    dropNext: (n) => void (drop = n),
    cutAll: () => sockets.forEach((s) => s.resetAndDestroy()),
    close: () => new Promise<void>((resolve) => {
      sockets.forEach((s) => s.destroy());
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = connect(Number(port), hostname);
    sockets.add(upstream);
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      // A request starts with its method; its body (if any) follows in the same or the next chunks.
      if (/^(GET|POST|DELETE|PUT|HEAD|OPTIONS|PATCH) /.test(chunk.toString('latin1', 0, 8))) {
        if (drop > 0) {
          drop--;
          client.resetAndDestroy();
          return;
        }
        proxy.forwarded++;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
