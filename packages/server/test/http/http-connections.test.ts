// HTTP connections open at once (docs/security.md "HTTP connections"): per socket peer
// (HTTP_MAX_CONNECTIONS_PER_CLIENT, a proxy TRUST_PROXY trusts excepted) and in all
// (HTTP_MAX_CONNECTIONS), refused with an answer written raw and closed at once; and idle
// keep-alive connections closed after HTTP_KEEP_ALIVE_TIMEOUT. Real sockets, real server.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { loadConfig, ConfigError } from '../../src/config/index.js';
import { trustedPeer } from '../../src/http/connection-caps.js';
import { request, startTestServer, type TestServer } from '../helpers/harness.js';

interface Conn {
  socket: Socket;
  /** Everything received, once the server closed the connection. */
  ended: Promise<string>;
  /** When the connection closed. */
  closed: Promise<number>;
}

/** A raw connection from `localAddress`, once connected. */
async function open(server: TestServer, localAddress: string): Promise<Conn> {
  const socket = connect({ host: '127.0.0.1', port: server.httpPort, localAddress });
  socket.on('error', () => {});
  let got = '';
  socket.on('data', (chunk: Buffer) => (got += chunk.toString('latin1')));
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  const ended = closed.then(() => got);
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, ended, closed };
}

/** A connection that has had one answer on it and stays open (keep-alive): surely counted by the server. */
async function held(server: TestServer, localAddress: string): Promise<Conn> {
  const conn = await open(server, localAddress);
  const answered = new Promise<string>((resolve) => conn.socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));
  conn.socket.write('GET /health_check HTTP/1.1\r\nHost: test\r\n\r\n');
  assert.match(await answered, /^HTTP\/1\.1 200 /);
  return conn;
}

/** A connection the server refuses: its raw answer, and that the server closed it. */
async function refused(server: TestServer, localAddress: string): Promise<string> {
  const conn = await open(server, localAddress);
  conn.socket.write('GET /health_check HTTP/1.1\r\nHost: test\r\n\r\n');
  return conn.ended;
}

const health = (server: TestServer, localAddress: string) => request(server.httpUrl, '/health_check', { localAddress });

describe('HTTP connection caps', () => {
  const servers: TestServer[] = [];
  const conns: Conn[] = [];
  after(async () => {
    for (const c of conns) c.socket.destroy();
    await Promise.all(servers.map((s) => s.close()));
  });
  const start = async (env: Record<string, string>) => {
    const server = await startTestServer(env);
    servers.push(server);
    return server;
  };

  it('HTTP_MAX_CONNECTIONS_PER_CLIENT: the (cap+1)th connection from one peer is answered 429 and closed; another peer still gets /health_check 200', async () => {
    const server = await start({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '4' });
    const mine = await Promise.all(Array.from({ length: 4 }, () => held(server, '127.0.0.1')));
    conns.push(...mine);
    const answer = await refused(server, '127.0.0.1');
    assert.match(answer, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    assert.match(answer, /\r\nretry-after: [1-9]\d*\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/);
    assert.match(answer, /At most 4 connections may be open from one client/);
    // Another client address is not counted with it.
    const other = await health(server, '127.0.0.2');
    assert.equal(other.status, 200);
    // One closed: the client may connect again.
    mine[0]!.socket.destroy();
    await mine[0]!.closed;
    let status = 0;
    for (const deadline = Date.now() + 10_000; status !== 200 && Date.now() < deadline; ) status = (await health(server, '127.0.0.1')).status;
    assert.equal(status, 200);
  });

  it('HTTP_MAX_CONNECTIONS: one past the total is answered 503 and closed, whoever it is from', async () => {
    const server = await start({ HTTP_MAX_CONNECTIONS: '5', HTTP_MAX_CONNECTIONS_PER_CLIENT: '3' });
    conns.push(...(await Promise.all([1, 1, 1, 2, 2].map((n) => held(server, `127.0.0.${n}`)))));
    const answer = await refused(server, '127.0.0.3');
    assert.match(answer, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(answer, /\r\nretry-after: [1-9]\d*\r\n/);
    assert.match(answer, /Too many connections to this server/);
  });

  it('a proxy TRUST_PROXY trusts is not capped per client (with a hop count: a loopback peer); one it does not trust is', async () => {
    const trusted = await start({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '2', TRUST_PROXY: '1' });
    conns.push(...(await Promise.all(Array.from({ length: 4 }, () => held(trusted, '127.0.0.1')))));
    assert.equal((await health(trusted, '127.0.0.1')).status, 200);
    const listed = await start({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '2', TRUST_PROXY: '127.0.0.5' });
    conns.push(...(await Promise.all(Array.from({ length: 3 }, () => held(listed, '127.0.0.5')))));
    conns.push(...(await Promise.all(Array.from({ length: 2 }, () => held(listed, '127.0.0.6')))));
    assert.match(await refused(listed, '127.0.0.6'), /^HTTP\/1\.1 429 /);
  });

  it('which peers count as a trusted proxy', () => {
    const hops = trustedPeer(1);
    assert.deepEqual(['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.1.2.3', '192.168.0.9', 'fd00::1', '203.0.113.7', '2001:db8::1'].map(hops), [true, true, true, true, true, true, false, false]);
    assert.equal(trustedPeer(0)('127.0.0.1'), false);
    assert.equal(trustedPeer(undefined)('127.0.0.1'), false);
    const list = trustedPeer(['203.0.113.0/24', 'loopback', '2001:db8::5']);
    assert.deepEqual(['203.0.113.200', '127.0.0.1', '2001:db8::5', '2001:db8::6', '10.0.0.1'].map(list), [true, true, true, false, false]);
  });
});

describe('HTTP_KEEP_ALIVE_TIMEOUT', () => {
  let server: TestServer;
  after(async () => server?.close());

  it('closes an idle keep-alive connection after it, and is short and bounded', async () => {
    server = await startTestServer({ HTTP_KEEP_ALIVE_TIMEOUT: '1s' });
    const conn = await held(server, '127.0.0.1');
    const answeredAt = Date.now();
    const closedAt = await conn.closed;
    assert.ok(closedAt - answeredAt >= 900, `closed ${closedAt - answeredAt} ms after the answer`);
    assert.equal(loadConfig({}).http.keepAliveTimeoutMs, 5000);
    assert.throws(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT: '3m' }), (err: unknown) => err instanceof ConfigError && /HTTP_KEEP_ALIVE_TIMEOUT is invalid: expected a duration of at most 2m/.test(err.message));
  });
});
