// Redis going away and coming back while the service runs on it (rate limits and
// inbox events). The system Redis is left alone: each test starts its own
// redis-server on a free port, kills it (SIGKILL) and starts it again on the same
// port, or puts a TCP proxy in front of it that stops forwarding (a Redis that
// no longer answers but keeps the connection open).
//
// What is promised: no client ever sees a 5xx or a hang because of Redis. While it
// is away the limits are counted per node in memory (rate-limiter-flexible's
// insurance limiter), so they still hold; events still reach the streams of the
// node that received the mail (docs: events across nodes are best effort, and
// GET /api/mails never depends on them); storage does not involve Redis. Once it
// is back the counters live in Redis again and events cross nodes again.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { client, createAddress, message, sendMail, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

function redisServerMissing(): string | false {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0) return false;
  if (process.env.REQUIRE_SERVICES === '1') throw new Error('redis-server is required (REQUIRE_SERVICES=1) but cannot be run');
  process.stderr.write('\n!!!!! SKIPPED: Redis outage suite — no redis-server binary (set REQUIRE_SERVICES=1 to make this a failure) !!!!!\n\n');
  return 'redis-server is not installed (apt install redis-server)';
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A redis-server of the test's own, without persistence: a restart loses every key, as a real crash without AOF does. */
class OwnRedis {
  private child: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${out}`));
      });
    });
  }

  /** Dies at once, as a crashed or OOM-killed Redis does. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `p`, or a failure (not a hang) when it takes longer than `ms`. */
async function within<T>(what: string, ms: number, p: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const value = await Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
  return { value, ms: Date.now() - started };
}

async function eventually(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** A client of the test's own to look into Redis (fresh each time: Redis restarts under it). */
async function inspect<T>(url: string, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

/** Subscribes to the service's event channel and collects what it publishes. */
async function listen(url: string, channel: string): Promise<{ wires: { a: number; e: { type: string } }[]; close: () => void }> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  await r.connect();
  const wires: { a: number; e: { type: string } }[] = [];
  r.on('message', (_c: string, text: string) => wires.push(JSON.parse(text) as { a: number; e: { type: string } }));
  await r.subscribe(channel);
  return { wires, close: () => r.disconnect() };
}

const addressIdOf = (jwt: string): number => (JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as { aid: number }).aid;

// Without a redis-server binary the cases are registered as skipped, with the reason.
const skip = redisServerMissing();

describe('Redis outage', { timeout: 120_000 }, () => {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  let n = 0;
  async function setUp(opts: { proxied?: boolean } = {}) {
    const redis = await OwnRedis.start();
    cleanups.push(() => redis.kill());
    let proxy: TcpProxy | undefined;
    if (opts.proxied) {
      proxy = await startTcpProxy({ host: '127.0.0.1', port: redis.port });
      cleanups.push(() => proxy!.close());
    }
    const prefix = `ro${process.pid}x${++n}:`;
    const server = await startTestServer({
      REDIS_URL: proxy ? proxy.via(redis.url) : redis.url,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_SETTINGS: '3/60',
      SMTP_RATE_MESSAGES: '3/60',
    });
    cleanups.push(() => server.close());
    const { address, jwt } = await createAddress(server);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    cleanups.push(() => stream.close());
    await stream.next('ready');
    return { redis, proxy, prefix, server, address, jwt, stream, api: client(server) };
  }

  const deliverOne = async (server: TestServer, address: string, id: string) =>
    (await within(`delivery ${id}`, 5_000, sendMail(server.smtpPort, { to: [address], message: message({ Subject: id, 'Message-ID': `<${id}@redis-outage.test>` }, id) }))).value.text;

  const mailEvent = async (stream: EventStream) => JSON.parse((await stream.next('mail')).data).message_id as string;

  it('killed and restarted: limits hold per node while it is away (no 5xx), local events and storage go on; afterwards counters and events use Redis again; nothing is lost', { skip }, async () => {
    const { redis, prefix, server, address, jwt, stream, api } = await setUp();
    const settings = async () => (await within('GET /api/settings', 5_000, api('/api/settings', { jwt }))).value;

    // Up: the counters live in Redis.
    assert.equal((await settings()).status, 200);
    assert.equal(await deliverOne(server, address, 'm1'), '250 2.6.0 Ok: stored 1 copy\r\n');
    assert.equal(await mailEvent(stream), '<m1@redis-outage.test>');
    assert.equal(await inspect(redis.url, (r) => r.get(`${prefix}rl:SETTINGS:127.0.0.1`)), '1');
    assert.equal(await inspect(redis.url, (r) => r.get(`${prefix}rl:SMTP_MESSAGES:127.0.0.1`)), '1');

    await redis.kill();
    await sleep(300);

    // Away: every answer is the one the limits call for, never a 5xx.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await settings()).status);
    assert.deepEqual(statuses, [200, 200, 200, 429], 'RATE_LIMIT_SETTINGS=3/60 counted in memory');
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.script([['EHLO client.test', 250]]);
      for (const id of ['m2', 'm3', 'm4']) {
        await smtp.script([
          ['MAIL FROM:<s@example.org>', 250],
          [`RCPT TO:<${address}>`, 250],
          ['DATA', 354],
        ]);
        assert.equal((await smtp.data(message({ Subject: id, 'Message-ID': `<${id}@redis-outage.test>` }, id))).text, '250 2.6.0 Ok: stored 1 copy\r\n');
      }
      // SMTP_RATE_MESSAGES=3/60, counted in memory: the fourth message is refused as designed.
      assert.equal((await smtp.command('MAIL FROM:<s@example.org>')).text, '421 4.7.0 Too many messages from your address; try again in 60 seconds\r\n');
    } finally {
      await smtp.quit();
    }
    for (const id of ['m2', 'm3', 'm4']) assert.equal(await mailEvent(stream), `<${id}@redis-outage.test>`);
    assert.equal((await api('/health_check')).status, 200);
    const listed = await api('/api/mails?limit=10&offset=0', { jwt });
    assert.equal(listed.status, 200);
    assert.equal(listed.json.count, 4);
    assert.equal((await api('/api/new_address', { body: {} })).status, 200);
    const newest = listed.json.results[0].id as number;
    assert.equal((await api(`/api/mails/wait?since=${newest}&timeout=0`, { jwt })).status, 204);
    const second = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    second.close();
    assert.equal(second.status, 200);

    // Back, empty (no persistence): the service reconnects and resubscribes by itself.
    await redis.restart();
    await eventually('the event subscriber is back', async () => {
      const [, subscribers] = (await inspect(redis.url, (r) => r.pubsub('NUMSUB', `${prefix}events`))) as [string, number];
      return subscribers === 1;
    });
    await eventually('the rate limiter counts in Redis again', async () => (await settings()).status === 200);
    assert.equal(await inspect(redis.url, (r) => r.get(`${prefix}rl:SETTINGS:127.0.0.1`)), '1');

    // Events cross Redis again, both ways.
    const published = await listen(redis.url, `${prefix}events`);
    try {
      assert.equal(await deliverOne(server, address, 'm5'), '250 2.6.0 Ok: stored 1 copy\r\n');
      assert.equal(await mailEvent(stream), '<m5@redis-outage.test>');
      await eventually('the delivery is published on Redis', async () => published.wires.length === 1);
      assert.equal(published.wires[0]!.a, addressIdOf(jwt));
      assert.equal(published.wires[0]!.e.type, 'mail');
    } finally {
      published.close();
    }
    assert.equal(await inspect(redis.url, (r) => r.get(`${prefix}rl:SMTP_MESSAGES:127.0.0.1`)), '1');
    // Another node's event, published on Redis, reaches this node's stream.
    await inspect(redis.url, (r) => r.publish(`${prefix}events`, JSON.stringify({ n: 'another-node', a: addressIdOf(jwt), e: { type: 'inbox_cleared' } })));
    await stream.next('inbox_cleared');

    const all = await api('/api/mails?limit=10&offset=0', { jwt });
    assert.deepEqual(
      all.json.results.map((m: { message_id: string }) => m.message_id).sort(),
      ['m1', 'm2', 'm3', 'm4', 'm5'].map((id) => `<${id}@redis-outage.test>`),
    );
  });

  it('stops answering (connection open, nothing comes back): rate-limited requests and MAIL FROM are still answered promptly from per-node counts; all is shared again once it answers', { skip }, async () => {
    const { redis, proxy, prefix, server, address, jwt, stream, api } = await setUp({ proxied: true });
    assert.equal((await api('/api/settings', { jwt })).status, 200);

    proxy!.freeze();
    try {
      const answered = await within('GET /api/settings with Redis frozen', 5_000, api('/api/settings', { jwt }));
      assert.equal(answered.value.status, 200);
      assert.ok(answered.ms < 2_500, `answered after ${answered.ms} ms`);
      const delivered = await within('a delivery with Redis frozen', 5_000, deliverOne(server, address, 'frozen'));
      assert.equal(delivered.value, '250 2.6.0 Ok: stored 1 copy\r\n');
      assert.equal(await mailEvent(stream), '<frozen@redis-outage.test>');
      assert.equal((await api('/health_check')).status, 200);
    } finally {
      proxy!.thaw();
    }

    await eventually('answers come from Redis again', async () => {
      const res = await within('GET /api/settings', 5_000, api('/api/settings', { jwt }));
      return res.value.status === 200 && res.ms < 500;
    });
    const published = await listen(redis.url, `${prefix}events`);
    try {
      assert.equal(await deliverOne(server, address, 'thawed'), '250 2.6.0 Ok: stored 1 copy\r\n');
      assert.equal(await mailEvent(stream), '<thawed@redis-outage.test>');
      await eventually('the delivery is published on Redis', async () => published.wires.length === 1);
    } finally {
      published.close();
    }
    const all = await api('/api/mails?limit=10&offset=0', { jwt });
    assert.deepEqual(
      all.json.results.map((m: { message_id: string }) => m.message_id).sort(),
      ['<frozen@redis-outage.test>', '<thawed@redis-outage.test>'],
    );
  });
});
