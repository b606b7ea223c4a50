// The shipped nginx configuration (deploy/nginx/temp-inbox.conf), run by Debian's
// real nginx in front of two nodes on PostgreSQL and Redis, as docs/deploy.md
// describes: HTTPS terminated by nginx with a certificate made here, the nodes
// started with TRUST_PROXY=1. Only the nodes' addresses, the ports and the
// certificate paths of the file are replaced (and its IPv6 listens dropped, which
// this machine may not have; on nginx before 1.25.1, `http2 on;` is written the older
// way, as the file's comment says). Clients connect from different loopback addresses
// (127.0.0.2, 127.0.0.3) so that the address a node sees can be told from nginx's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { message, sendMail, startTestServer, tmp, type TestServer } from '../helpers/harness.js';
import { PG_URL, REDIS_URL, skipUnless } from '../helpers/services.js';

/** Whether this nginx knows `http2 on;` (1.25.1 and later), from `nginx -v`. */
function nginxHasHttp2Directive(): boolean {
  const out = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  const m = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(`${out.stderr}${out.stdout}`);
  if (!m) return true;
  const [major, minor, patch] = m.slice(1).map(Number) as [number, number, number];
  return major > 1 || minor > 25 || (minor === 25 && patch >= 1);
}

const METRICS_TOKEN = 'nginx-test-metrics-token';

/** POST /api/new_address answered 200 by this node so far, from its own /metrics (which node answered, without trusting nginx). */
async function createdOn(node: TestServer): Promise<number> {
  const res = await fetch(`${node.httpUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(res.status, 200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith('temp_inbox_http_requests_total{') && l.includes('method="POST"') && l.includes('route="/api/new_address"') && l.includes('status="200"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const CONF = fileURLToPath(new URL('../../../../deploy/nginx/temp-inbox.conf', import.meta.url));
const HOST = 'mail.example.com';

function toolMissing(): string | false {
  for (const [tool, args] of [['nginx', ['-v']], ['openssl', ['version']]] as const) {
    try {
      execFileSync(tool, args, { stdio: 'ignore' });
    } catch {
      const reason = `${tool} is not installed (apt install ${tool === 'nginx' ? 'nginx-light' : tool})`;
      if (process.env.REQUIRE_SERVICES === '1') throw new Error(`nginx-proxy.test.ts: ${reason}, and REQUIRE_SERVICES=1`);
      process.stderr.write(`\n!!!!! SKIPPED: nginx suite — ${reason} !!!!!\n\n`);
      return reason;
    }
  }
  return false;
}

// Without nginx, openssl, PostgreSQL or Redis the cases are registered as skipped, with the reason.
const skip = toolMissing() || skipUnless('postgres', 'redis');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function waitForPort(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('nginx in front of two nodes (deploy/nginx/temp-inbox.conf)', { timeout: 120_000 }, () => {
  const dir = tmp('temp-inbox-nginx-');
  const schema = `nx_${process.pid}_${randomBytes(4).toString('hex')}`;
  let a: TestServer;
  let b: TestServer;
  let nginx: ChildProcess | undefined;
  let nginxExited: Promise<void> | undefined;
  let httpsPort: number;
  let httpPort: number;
  let ca: string;

  /** A request through nginx over HTTPS, from the given loopback address. */
  function viaProxy(path: string, opts: { from?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: httpsPort,
          servername: HOST,
          ca,
          path,
          method: opts.method ?? 'GET',
          localAddress: opts.from ?? '127.0.0.2',
          headers: { host: HOST, ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  before(async () => {
    if (skip) return;
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`, '-keyout', keyFile, '-out', certFile],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    ca = readFileSync(certFile, 'utf8');
    const env = {
      DATABASE_URL: PG_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${schema}:`,
      JWT_SECRET: randomBytes(32).toString('hex'),
      SESSION_SECRET: randomBytes(32).toString('hex'),
      TRUST_PROXY: '1',
      RATE_LIMIT_NEW_ADDRESS: '3/60',
      METRICS_TOKEN: METRICS_TOKEN,
    };
    a = await startTestServer(env);
    b = await startTestServer(env);
    httpsPort = await freePort();
    httpPort = await freePort();

    const shipped = readFileSync(CONF, 'utf8');
    const http2Directive = nginxHasHttp2Directive();
    const nodeA = new URL(a.httpUrl).host;
    const nodeB = new URL(b.httpUrl).host;
    const site = shipped
      .replace('server 127.0.0.1:8080;', `server ${nodeA};`)
      .replace('server 127.0.0.1:8081;', `server ${nodeB};`)
      .replace('listen 443 ssl;', `listen 127.0.0.1:${httpsPort} ssl${http2Directive ? '' : ' http2'};`)
      // nginx before 1.25.1 (Debian 12's) has no `http2 on;`: the file's comment says what to write instead.
      .replace('\n    http2 on;\n', http2Directive ? '\n    http2 on;\n' : '\n')
      .replace(/^\s*listen \[::\]:\d+.*$/gm, '')
      .replace('listen 80;', `listen 127.0.0.1:${httpPort};`)
      .replace('/etc/letsencrypt/live/mail.example.com/fullchain.pem', certFile)
      .replace('/etc/letsencrypt/live/mail.example.com/privkey.pem', keyFile);
    for (const [from, to] of [
      ['8080', nodeA],
      ['8081', nodeB],
      ['https', httpsPort],
      ['http', httpPort],
      ['cert', certFile],
    ] as const) {
      assert.ok(site.includes(String(to)), `the shipped file no longer has the line for ${from} that this test replaces`);
    }
    writeFileSync(join(dir, 'site.conf'), site);
    mkdirSync(join(dir, 'temp'));
    const temp = (n: string) => `${n}_temp_path ${join(dir, 'temp', n)};`;
    writeFileSync(
      join(dir, 'nginx.conf'),
      [
        'daemon off;',
        'master_process off;',
        `pid ${join(dir, 'nginx.pid')};`,
        `error_log ${join(dir, 'error.log')} warn;`,
        'events { worker_connections 256; }',
        'http {',
        '  access_log off;',
        `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
        `  include ${join(dir, 'site.conf')};`,
        '}',
      ].join('\n'),
    );
    nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    nginx.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    nginxExited = new Promise((resolve) => nginx!.once('exit', () => resolve()));
    await Promise.race([
      waitForPort(httpsPort, 10_000),
      nginxExited.then(() => {
        throw new Error(`nginx exited: ${err}${readFileSync(join(dir, 'error.log'), 'utf8')}`);
      }),
    ]);
  });

  after(async () => {
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGTERM');
      const timer = setTimeout(() => nginx!.kill('SIGKILL'), 5000);
      await nginxExited;
      clearTimeout(timer);
    }
    await a?.close();
    await b?.close();
    if (!skip) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers through nginx over HTTPS, and sends plain HTTP to HTTPS', { skip }, async () => {
    const health = await viaProxy('/health_check');
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: 'ok', version: '1.0.0', storage: 'ok' });
    const plain = await new Promise<Reply>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: httpPort, path: '/api/settings', headers: { host: HOST } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: '' }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(plain.status, 301);
    assert.equal(plain.headers.location, `https://${HOST}/api/settings`);
  });

  it('gives the session cookie Secure behind HTTPS termination, and not on plain HTTP to a node', { skip }, async () => {
    const proxied = await viaProxy('/api/new_address', { method: 'POST', body: {}, from: '127.0.0.4' });
    assert.equal(proxied.status, 200, proxied.body);
    const cookies = [proxied.headers['set-cookie'] ?? []].flat();
    assert.ok(cookies.length > 0, 'a session cookie is set');
    for (const c of cookies) assert.match(c, /;\s*Secure/i, c);
    const direct = await fetch(`${a.httpUrl}/api/new_address`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(direct.status, 200);
    for (const c of direct.headers.getSetCookie()) assert.doesNotMatch(c, /;\s*Secure/i, c);
  });

  it('rate-limits each client by its own address across both nodes; a forged X-Forwarded-For changes nothing', { skip }, async () => {
    const create = (from: string, headers: Record<string, string> = {}) => viaProxy('/api/new_address', { method: 'POST', body: {}, from, headers });
    // RATE_LIMIT_NEW_ADDRESS=3/60, counted in Redis: the three requests reach both nodes
    // (nginx's round robin), as each node's own request counter shows.
    const before = [await createdOn(a), await createdOn(b)];
    for (let i = 0; i < 3; i++) assert.equal((await create('127.0.0.2')).status, 200, `request ${i + 1} of 3`);
    const served = [(await createdOn(a)) - before[0]!, (await createdOn(b)) - before[1]!];
    assert.equal(served[0]! + served[1]!, 3, `created on node a, node b: ${served.join(', ')}`);
    assert.ok(served[0]! >= 1 && served[1]! >= 1, `both nodes served some (node a ${served[0]}, node b ${served[1]}), so the count is shared`);
    const over = await create('127.0.0.2');
    assert.equal(over.status, 429);
    assert.equal(over.headers['retry-after'], '60', 'the refusal blocks for one whole window');
    assert.equal((await create('127.0.0.2', { 'x-forwarded-for': '203.0.113.9' })).status, 429, 'a client cannot name itself another address');
    assert.equal((await create('127.0.0.3')).status, 200, 'another client is not limited');
  });

  it('passes Server-Sent Events through as they happen: a mail delivered to one node is on a stream within a second', { skip }, async () => {
    const created = await viaProxy('/api/new_address', { method: 'POST', body: {}, from: '127.0.0.5' });
    assert.equal(created.status, 200, created.body);
    const { address, jwt } = JSON.parse(created.body) as { address: string; jwt: string };
    const events: { at: number; data: string }[] = [];
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: httpsPort, servername: HOST, ca, path: '/api/events', localAddress: '127.0.0.5', headers: { host: HOST, authorization: `Bearer ${jwt}`, accept: 'text/event-stream' } },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    try {
      assert.equal(stream.statusCode, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      let buffer = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => {
        buffer += d;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (/^event: mail$/m.test(block)) events.push({ at: performance.now(), data: block });
        }
      });
      // Give the stream a moment to be registered on its node before mail arrives.
      await new Promise((r) => setTimeout(r, 300));
      for (const [node, i] of [[b, 1], [a, 2]] as const) {
        const r = await sendMail(node.smtpPort, { to: [address], message: message({ Subject: `through nginx ${i}` }, `code 48291${i}`) });
        assert.equal(r.code, 250, r.text);
        const acknowledged = performance.now();
        const until = acknowledged + 1000;
        while (events.length < i && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
        assert.equal(events.length, i, `mail ${i} (delivered to ${node === a ? 'node a' : 'node b'}) reached the stream within a second of its 250`);
        assert.match(events[i - 1]!.data, new RegExp(`through nginx ${i}`));
      }
    } finally {
      stream.destroy();
    }
  });
});
