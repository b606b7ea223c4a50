// The HTTP baseline: a bare node:http server that answers each configured path
// prefix with fixed bytes (captured from temp-inbox's own responses), doing no
// routing, auth, database or serialisation work. It prints READY <port>.
// Usage: node --import tsx bare-http.ts '<json: [{prefix, file, contentType}]>'
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const routes = (JSON.parse(process.argv[2] ?? '[]') as { prefix: string; file: string; contentType: string }[]).map((r) => ({
  prefix: r.prefix,
  body: readFileSync(r.file),
  contentType: r.contentType,
}));

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const route = routes.find((r) => url.startsWith(r.prefix));
  if (!route) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('No such route.');
    return;
  }
  res.writeHead(200, { 'content-type': route.contentType, 'content-length': route.body.length });
  res.end(route.body);
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as { port: number }).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
