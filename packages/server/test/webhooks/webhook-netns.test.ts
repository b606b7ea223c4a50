// Webhooks on a host that cannot route an address family (an IPv6 address on a host
// without IPv6, as in a default container): the connect fails at once, in the call. The
// service once died of it, within 2 s of a mail, and again after every restart when the
// delivery's lease ran out. Here the real service runs as a child process inside a
// network namespace of its own with only loopback, so an attempt to a public IPv6
// address fails on this machine and no packet leaves it; its resolver asks a DNS server
// on 127.0.0.1:53 in that namespace (/etc/resolv.conf bind-mounted in a mount namespace
// of its own). The file runs itself inside the namespaces: the outer run starts the inner
// one and passes when it passes.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAddress, message, request, sendMail, tmp } from '../helpers/harness.js';
import { startWebhookDns, type WebhookDns } from '../helpers/webhook-dns.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const INSIDE = process.env['TEMP_INBOX_WEBHOOK_NETNS'] === '1';
const THIS_FILE = fileURLToPath(import.meta.url);
const MAIN_SOURCE = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** Public unicast IPv6 addresses (2000::/3): unroutable inside the namespace, so never reached. */
const V6_A = '2606:2800:220:1:248:1893:25c8:1946';
const V6_B = '2a00:1450:4001:82b::200e';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

if (!INSIDE) {
  describe('webhooks to an address family the host cannot route', () => {
    const probe = spawnSync('unshare', ['-n', '-m', 'sh', '-c', 'ip link set lo up && mount --bind /dev/null /etc/resolv.conf'], { encoding: 'utf8' });
    const unavailable = `needs network and mount namespaces (unshare -n -m and ip, as root): ${(probe.stderr || probe.error?.message || '').trim()}`;
    // Where the services are required (CI), a machine without them fails instead.
    const skip = probe.status === 0 || process.env['REQUIRE_SERVICES'] === '1' ? false : unavailable;
    it('runs the service in a network namespace with only loopback (the cases below run inside it)', { skip, timeout: 180_000 }, async () => {
      assert.equal(probe.status, 0, unavailable);
      const dir = tmp('temp-inbox-netns-');
      dirs.push(dir);
      const resolvConf = join(dir, 'resolv.conf');
      writeFileSync(resolvConf, 'nameserver 127.0.0.1\noptions attempts:1 timeout:1\n');
      const script = 'ip link set lo up && mount --bind "$1" /etc/resolv.conf && exec "$2" --import tsx "$3"';
      // Its own test run, reported as text (not to this runner's channel).
      const { NODE_TEST_CONTEXT: _, ...env } = process.env;
      const child = spawn('unshare', ['-n', '-m', 'sh', '-c', script, 'sh', resolvConf, process.execPath, THIS_FILE], {
        env: { ...env, TEMP_INBOX_WEBHOOK_NETNS: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | string>((resolve) => child.once('exit', (c, s) => resolve(c ?? s ?? -1)));
      assert.equal(code, 0, out);
      assert.match(out, /\bpass [1-9]/, out);
      assert.match(out, /\bfail 0\b/, out);
    });
  });
} else {
  interface Service {
    child: ChildProcess;
    httpUrl: string;
    smtpPort: number;
    exited: Promise<number | string>;
    output: () => string;
  }

  /** The service from its source (as main.ts runs it), inside this namespace. */
  function startService(dataDir: string): Promise<Service> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN_SOURCE], {
      env: { PATH: process.env['PATH'] ?? '', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', LOG_LEVEL: 'warn', DNS_SERVERS: '127.0.0.1:1', DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMITS: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    return new Promise((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /HTTP on (http:\/\/\S+), SMTP on port (\d+)/.exec(out);
        if (m) resolve({ child, httpUrl: m[1]!.replace(/,$/, ''), smtpPort: Number(m[2]), exited, output: () => out });
      });
      void exited.then((code) => reject(new Error(`service exited (${code}) before listening: ${out}`)));
    });
  }

  async function untilDeliveries(s: Service, jwt: string, done: (list: any[]) => boolean, timeoutMs = 20_000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      assert.equal(s.child.exitCode, null, `the service is still running: ${s.output()}`);
      const res = await request(s.httpUrl, '/api/webhook/deliveries', { jwt });
      assert.equal(res.status, 200, res.text);
      if (done(res.json.results)) return res.json.results;
      if (Date.now() > deadline) throw new Error(`deliveries after ${timeoutMs} ms: ${JSON.stringify(res.json.results, null, 1)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  describe('webhooks inside a network namespace with only loopback', () => {
    let dns: WebhookDns;
    let receiver: Receiver;
    let service: Service;

    after(async () => {
      service?.child.kill('SIGTERM');
      await service?.exited;
      await receiver?.stop();
      await dns?.close();
    });

    it('a name whose only address is a public IPv6 one: the attempt fails at once with a clear error and is retried with back-off; the service lives on', async () => {
      dns = await startWebhookDns(53);
      receiver = await startReceiver('127.0.0.1');
      const dir = tmp('temp-inbox-netns-service-');
      dirs.push(dir);
      service = await startService(dir);
      dns.zone.set('v6only.hooks.test', [V6_A]);
      const { address, jwt } = await createAddress(service);
      const put = await request(service.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: 'http://v6only.hooks.test:8080/hook' } });
      assert.equal(put.status, 200, put.text);
      await sendMail(service.smtpPort, { to: [address], message: message({ Subject: 'v6 only', 'Message-ID': `<${randomUUID()}@test>` }, 'x') });
      // The default back-off: the second attempt comes 2.5 to 5 s after the first.
      const list = await untilDeliveries(service, jwt, (l) => l.length >= 2);
      // Newest first.
      const first = list[list.length - 1];
      const second = list[list.length - 2];
      assert.deepEqual(
        [first.attempt, first.outcome, first.status, first.error],
        [1, 'failed', null, "The receiver's address could not be reached from this server (ENETUNREACH)."],
      );
      assert.ok(first.duration_ms < 1000, `failed at once (${first.duration_ms} ms)`);
      const gap = Date.parse(first.next_attempt_at) - Date.parse(first.at);
      assert.ok(gap >= 2000, `retried with back-off (${gap} ms)`);
      assert.deepEqual([second.attempt, second.outcome, second.error], [2, 'failed', first.error]);
      assert.ok(Date.parse(second.at) >= Date.parse(first.next_attempt_at) - 5, 'not before it was due');
      assert.equal(service.child.exitCode, null, service.output());
    });

    it('several addresses of both families (autoSelectFamily): an IPv4 receiver beside an unroutable IPv6 address is delivered to; two unroutable IPv6 addresses, or one beside a refused IPv4 port, fail and are retried', async () => {
      receiver.secret = undefined;
      dns.zone.set('mixed.hooks.test', [V6_A, '127.0.0.1']);
      dns.zone.set('v6twice.hooks.test', [V6_A, V6_B]);
      dns.zone.set('refused.hooks.test', ['127.0.0.1', V6_B]);
      const hooks: { jwt: string; address: string }[] = [];
      for (const url of [`http://mixed.hooks.test:${receiver.port}/mixed`, 'http://v6twice.hooks.test:8080/x', 'http://refused.hooks.test:8089/x']) {
        const a = await createAddress(service);
        const put = await request(service.httpUrl, '/api/webhook', { method: 'PUT', jwt: a.jwt, body: { url } });
        assert.equal(put.status, 200, `${url}: ${put.text}`);
        hooks.push(a);
      }
      for (const h of hooks) await sendMail(service.smtpPort, { to: [h.address], message: message({ Subject: 'mixed', 'Message-ID': `<${randomUUID()}@test>` }, 'x') });
      const [post] = await receiver.untilPosts(1, 10_000);
      assert.equal(post!.path, '/mixed');
      assert.equal(post!.localAddress, '127.0.0.1', 'connected to the IPv4 address');
      const [mixed, twice, refused] = hooks;
      assert.deepEqual(
        (await untilDeliveries(service, mixed!.jwt, (l) => l.length === 1)).map((d) => [d.outcome, d.status]),
        [['delivered', 200]],
      );
      const twiceList = await untilDeliveries(service, twice!.jwt, (l) => l.length >= 2);
      assert.ok(twiceList.every((d) => d.outcome === 'failed' && d.error === "The receiver's address could not be reached from this server (ENETUNREACH)."), JSON.stringify(twiceList));
      const refusedList = await untilDeliveries(service, refused!.jwt, (l) => l.length >= 2);
      assert.ok(refusedList.every((d) => d.outcome === 'failed' && d.status === null && typeof d.error === 'string'), JSON.stringify(refusedList));
      assert.equal(service.child.exitCode, null, service.output());
    });
  });
}
