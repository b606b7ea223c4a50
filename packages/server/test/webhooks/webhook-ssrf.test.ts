// The webhook SSRF guard (docs/security.md "Webhooks"). No test here sends anything
// beyond the loopback range: the private, link-local, metadata and other ranges are
// judged by the guard's decision function and refused at PUT time, never connected to;
// names resolve through a DNS server of the test's on 127.0.0.1 (helpers/webhook-dns.ts),
// or are `localhost`; end-to-end deliveries go to receivers on 127.0.0.1 and ::1 only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/index.js';
import { checkAddress, dnsLookup, resolveTarget } from '../../src/webhooks/guard.js';
import { parseWebhookUrl } from '../../src/domain/webhook-url.js';
import { createAddress, message, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { startWebhookDns, type WebhookDns } from '../helpers/webhook-dns.js';

/** Every kind of address a webhook must never reach without WEBHOOK_ALLOW_PRIVATE, with the reason the guard gives. */
const REFUSED: [string, RegExp][] = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['::1', /loopback/],
  ['10.0.0.1', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['fc00::1', /private/],
  ['fd12:3456::1', /private/],
  ['169.254.169.254', /link-local/],
  ['169.254.0.1', /link-local/],
  ['fe80::1', /link-local/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.127.255.255', /carrier-grade NAT/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['ff02::1', /multicast/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['::', /unspecified/],
  ['255.255.255.255', /broadcast/],
  ['::ffff:127.0.0.1', /IPv4-mapped/],
  ['::ffff:10.0.0.1', /IPv4-mapped/],
  ['::ffff:169.254.169.254', /IPv4-mapped/],
  ['::ffff:8.8.8.8', /IPv4-mapped/],
  ['64:ff9b::7f00:1', /reserved/], // NAT64 of 127.0.0.1
  ['2002:7f00:1::1', /reserved/], // 6to4 of 127.0.0.1
  ['::7f00:1', /reserved/], // IPv4-compatible 127.0.0.1
  ['2001:db8::1', /reserved/],
  ['192.0.2.1', /reserved/],
  ['198.18.0.1', /reserved/],
  ['240.0.0.1', /reserved/],
  ['fd00:ec2::254', /private/], // the AWS metadata service over IPv6
];

/** Public unicast addresses: allowed (only judged, never connected to). */
const PUBLIC = ['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'];

describe("the guard's decision function", () => {
  it('refuses every non-public kind of address, with its reason', () => {
    for (const [ip, reason] of REFUSED) {
      const verdict = checkAddress(ip, false);
      assert.equal(verdict.allowed, false, ip);
      assert.match((verdict as { reason: string }).reason, reason, ip);
    }
  });

  it('allows public unicast addresses', () => {
    for (const ip of PUBLIC) assert.deepEqual(checkAddress(ip, false), { allowed: true }, ip);
  });

  it('with WEBHOOK_ALLOW_PRIVATE: loopback, private and carrier-grade NAT (also IPv4-mapped) are allowed; link-local, the metadata service, multicast, broadcast, unspecified and reserved never', () => {
    for (const ip of ['127.0.0.1', '::1', '10.0.0.1', '192.168.1.1', 'fc00::1', '100.64.0.1', '::ffff:127.0.0.1', '::ffff:10.1.2.3', ...PUBLIC]) {
      assert.deepEqual(checkAddress(ip, true), { allowed: true }, ip);
    }
    for (const ip of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '224.0.0.1', 'ff02::1', '0.0.0.0', '::', '255.255.255.255', '192.0.2.1', '64:ff9b::7f00:1']) {
      assert.equal(checkAddress(ip, true).allowed, false, ip);
    }
  });

  it('judges only addresses written canonically (ipaddr.js alone would read 0x7f.1 and 127.1)', () => {
    for (const odd of ['0x7f.1', '127.1', '2130706433', '017700000001', 'localhost', '', '1.2.3.4.5']) assert.equal(checkAddress(odd, true).allowed, false, odd);
  });

  it('URL hosts in every spelling of an address are normalised by the URL parser, then refused: decimal, hex, octal, short, bracketed IPv6, IPv4-mapped', async () => {
    const refuse = async (url: string, reason: RegExp) => {
      const target = parseWebhookUrl(url);
      await assert.rejects(resolveTarget(target, { allowPrivate: false, lookup: () => assert.fail(`no look-up for ${url}`), timeoutMs: 1000 }), reason, url);
    };
    for (const url of ['http://2130706433/', 'http://0x7f000001/', 'http://0x7f.1/', 'http://017700000001/', 'http://127.1/', 'http://127.0.0.1.:8080/', 'http://[::1]/', 'http://[0:0:0:0:0:0:0:1]/']) {
      await refuse(url, /loopback/);
    }
    for (const url of ['http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/']) await refuse(url, /IPv4-mapped/);
    await refuse('http://169.254.169.254/latest/meta-data/', /link-local/);
    await refuse('http://[fe80::a9fe:a9fe]/', /link-local/);
    await refuse('http://0/', /unspecified/);
    await refuse('http://localhost:8080/', /loopback/);
    await refuse('http://LOCALHOST./', /loopback/);
    await refuse('http://api.localhost/', /loopback/);
  });
});

describe('the guard at PUT /api/webhook (WEBHOOK_ALLOW_PRIVATE unset)', () => {
  let server: TestServer;
  let dns: WebhookDns;
  let v4: Receiver;
  let v6: Receiver;
  let jwt: string;
  before(async () => {
    dns = await startWebhookDns();
    dns.zone.set('loopback.hooks.test', ['127.0.0.1']);
    dns.zone.set('loopback6.hooks.test', ['::1']);
    dns.zone.set('mapped.hooks.test', ['::ffff:127.0.0.1']);
    dns.zone.set('metadata.hooks.test', ['169.254.169.254']);
    dns.zone.set('private.hooks.test', ['10.1.2.3']);
    dns.zone.set('mixed.hooks.test', ['93.184.216.34', '10.0.0.1']);
    dns.zone.set('mixed6.hooks.test', ['93.184.216.34', 'fd00::1']);
    dns.silent.add('silent.hooks.test');
    server = await startTestServer({}, undefined, undefined, { webhooks: { lookup: dns.lookup, timeoutMs: 500 } });
    v4 = await startReceiver('127.0.0.1');
    v6 = await startReceiver('::1');
    jwt = (await createAddress(server, { name: 'guarded' })).jwt;
  });
  after(async () => {
    await server?.close();
    await v4?.stop();
    await v6?.stop();
    await dns?.close();
  });

  const put = (url: string) => request(server.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url } });

  it('refuses loopback targets in every form: 127.0.0.1, [::1], [::ffff:127.0.0.1], localhost, a name resolving to 127.0.0.1 or ::1, and the receivers listening there are never asked', async () => {
    const cases: [string, RegExp][] = [
      [v4.url(), /^The webhook host is a loopback address; webhooks are only sent to public addresses\.$/],
      [`http://[::1]:${v6.port}/hook`, /is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${v4.port}/hook`, /is an IPv4-mapped IPv6 address/],
      [`http://localhost:${v4.port}/hook`, /is a loopback address/],
      [`http://loopback.hooks.test:${v4.port}/hook`, /^The webhook host name resolves to a loopback address; webhooks are only sent to public addresses\.$/],
      [`http://loopback6.hooks.test:${v6.port}/hook`, /resolves to a loopback address/],
      [`http://mapped.hooks.test:${v4.port}/hook`, /resolves to an IPv4-mapped IPv6 address/],
      [`http://2130706433:${v4.port}/hook`, /is a loopback address/],
    ];
    for (const [url, why] of cases) {
      const res = await put(url);
      assert.equal(res.status, 400, `${url}: ${res.status} ${res.text}`);
      assert.match(res.text, why, url);
    }
    assert.equal((await request(server.httpUrl, '/api/webhook', { jwt })).status, 404, 'nothing was set');
    assert.equal(v4.posts.length + v6.posts.length, 0);
  });

  it('refuses private, link-local (the metadata service), carrier-grade NAT, multicast, unspecified and reserved addresses and names resolving to them, also when one address of several is', async () => {
    const cases: [string, RegExp][] = [
      ['http://10.0.0.1/', /private/],
      ['http://172.16.5.4:8080/', /private/],
      ['http://192.168.0.10/', /private/],
      ['https://[fd00::1]/', /private/],
      ['http://169.254.169.254/latest/meta-data/iam/', /link-local/],
      ['http://[fe80::1]/', /link-local/],
      ['http://100.64.0.1/', /carrier-grade NAT/],
      ['http://224.0.0.251/', /multicast/],
      ['http://[ff02::1]/', /multicast/],
      ['http://0.0.0.0/', /unspecified/],
      ['http://[::]/', /unspecified/],
      ['http://255.255.255.255/', /broadcast/],
      ['http://192.0.2.10/', /reserved/],
      ['http://[64:ff9b::a9fe:a9fe]/', /reserved/],
      ['http://metadata.hooks.test/', /resolves to a link-local address/],
      ['http://private.hooks.test/', /resolves to a private-network address/],
      ['http://mixed.hooks.test/', /resolves to a private-network address/],
      ['http://mixed6.hooks.test/', /resolves to a private-network \(unique local\) address/],
    ];
    for (const [url, why] of cases) {
      const res = await put(url);
      assert.equal(res.status, 400, `${url}: ${res.status} ${res.text}`);
      assert.match(res.text, why, url);
    }
  });

  it('refuses a name that does not resolve, and one whose name server does not answer in time', async () => {
    const nx = await put('https://nowhere.hooks.test/x');
    assert.deepEqual([nx.status, nx.text], [400, 'The webhook host name does not resolve.']);
    const started = performance.now();
    const slow = await put('https://silent.hooks.test/x');
    assert.deepEqual([slow.status, slow.text], [400, 'The webhook host name did not resolve within 0.5 s.']);
    assert.ok(performance.now() - started < 2000, 'within the time-out (0.5 s here)');
  });

  it("the service's resolver (A and AAAA through c-ares) reads both families; when it gives up on its own sooner, it is asked again until the time the refusal names has passed", async () => {
    dns.zone.set('both.hooks.test', ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    const resolver = dnsLookup({ servers: [dns.server], queryTimeoutMs: 200, tries: 1 });
    assert.deepEqual(await resolver('both.hooks.test'), [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    // On its own this resolver gives up well within a second.
    const alone = performance.now();
    await assert.rejects(resolver('silent.hooks.test'));
    const givesUpAfter = performance.now() - alone;
    assert.ok(givesUpAfter < 1000, `the resolver alone gave up after ${givesUpAfter.toFixed(0)} ms`);
    let asked = 0;
    const resolve: typeof resolver = (host) => (asked++, resolver(host));
    const started = performance.now();
    await assert.rejects(resolveTarget(parseWebhookUrl('https://silent.hooks.test/'), { allowPrivate: false, lookup: resolve, timeoutMs: 2000 }), /^WebhookRefusedError: The webhook host name did not resolve within 2 s\.$/);
    const took = performance.now() - started;
    assert.ok(took >= 1990 && took < 3500, `refused for time after ${took.toFixed(0)} ms, as it says (2 s)`);
    assert.ok(asked >= 2, `asked ${asked} times`);
    await assert.rejects(resolveTarget(parseWebhookUrl('https://nowhere.hooks.test/'), { allowPrivate: false, lookup: resolve, timeoutMs: 3000 }), /^WebhookRefusedError: The webhook host name does not resolve\.$/);
  });

  it('accepts a name resolving to public addresses only (resolved, never connected to)', async () => {
    dns.zone.set('public.hooks.test', ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    const res = await put('https://public.hooks.test/in?k=1');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.url, 'https://public.hooks.test/in?k=1');
    assert.equal((await request(server.httpUrl, '/api/webhook', { method: 'DELETE', jwt })).status, 200);
  });

  it('checks again at delivery: a name that resolved to a public address at PUT and to 127.0.0.1 since is refused, and the loopback receiver is never asked', async () => {
    dns.zone.set('flip.hooks.test', ['93.184.216.34']);
    const { address, jwt: flipJwt } = await createAddress(server, { name: 'flip' });
    const res = await request(server.httpUrl, '/api/webhook', { method: 'PUT', jwt: flipJwt, body: { url: `http://flip.hooks.test:${v4.port}/hook` } });
    assert.equal(res.status, 200, res.text);
    // The record changes before any mail: nothing is ever sent to the public address.
    dns.zone.set('flip.hooks.test', ['127.0.0.1']);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'flip' }, 'x') });
    const deadline = Date.now() + 10_000;
    let list: any[] = [];
    while (list.length === 0 && Date.now() < deadline) {
      list = (await request(server.httpUrl, '/api/webhook/deliveries', { jwt: flipJwt })).json.results;
      if (list.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(
      list.map((d) => [d.outcome, d.status, d.error]),
      [['failed', null, 'The webhook host name resolves to a loopback address; webhooks are only sent to public addresses.']],
    );
    assert.equal(v4.posts.length, 0, 'the loopback receiver counts no request');
  });

  it('WEBHOOK_URL naming a loopback, private or metadata address stops start-up, without repeating the URL', () => {
    const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    for (const url of ['http://127.0.0.1:9000/all?token=s3cret', 'http://[::1]/s3cret', 'http://localhost/s3cret', 'http://10.0.0.1/s3cret', 'http://[::ffff:127.0.0.1]/s3cret']) {
      assert.throws(
        () => loadConfig({ WEBHOOK_URL: url, WEBHOOK_SECRET: secret }),
        (err: Error) => /WEBHOOK_URL's host is .*WEBHOOK_ALLOW_PRIVATE=true/.test(err.message) && !err.message.includes('s3cret'),
        url,
      );
    }
    assert.equal(loadConfig({ WEBHOOK_URL: 'http://127.0.0.1:9000/all', WEBHOOK_SECRET: secret, WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.url, 'http://127.0.0.1:9000/all');
    assert.throws(() => loadConfig({ WEBHOOK_URL: 'http://169.254.169.254/', WEBHOOK_SECRET: secret, WEBHOOK_ALLOW_PRIVATE: 'true' }), /link-local/);
  });
});

describe('loopback end to end (WEBHOOK_ALLOW_PRIVATE=true): connected to the address that was checked', () => {
  let server: TestServer;
  let dns: WebhookDns;
  let v4: Receiver;
  let v6: Receiver;
  before(async () => {
    dns = await startWebhookDns();
    dns.zone.set('receiver.hooks.test', ['127.0.0.1']);
    server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' }, undefined, undefined, { webhooks: { lookup: dns.lookup } });
    v4 = await startReceiver('127.0.0.1');
    v6 = await startReceiver('::1');
  });
  after(async () => {
    await server?.close();
    await v4?.stop();
    await v6?.stop();
    await dns?.close();
  });

  for (const [label, url, on, local, host] of [
    ['127.0.0.1', () => v4.url(), () => v4, '127.0.0.1', () => `127.0.0.1:${v4.port}`],
    ['[::1]', () => `http://[::1]:${v6.port}/hook`, () => v6, '::1', () => `[::1]:${v6.port}`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${v4.port}/hook`, () => v4, '127.0.0.1', () => `[::ffff:7f00:1]:${v4.port}`],
    ['localhost', () => `http://localhost:${v4.port}/hook`, () => v4, '127.0.0.1', () => `localhost:${v4.port}`],
    ['a name resolving to 127.0.0.1', () => `http://receiver.hooks.test:${v4.port}/hook`, () => v4, '127.0.0.1', () => `receiver.hooks.test:${v4.port}`],
  ] as const) {
    it(`${label}: delivered, signed, with the URL's host in Host`, async () => {
      const r = on();
      const before = r.posts.length;
      const { address, jwt } = await createAddress(server);
      const put = await request(server.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: url() } });
      assert.equal(put.status, 200, put.text);
      r.secret = put.json.secret;
      const looked = dns.lookups.length;
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: label }, 'x') });
      const posts = await r.untilPosts(before + 1);
      const post = posts[before]!;
      assert.equal(post.verified, true);
      assert.equal(post.event.data.address, address);
      assert.equal(post.localAddress.replace(/^::ffff:/, ''), local, 'connected to the checked address');
      assert.equal(post.headers['host'], host());
      if (label.startsWith('a name')) assert.equal(dns.lookups.length, looked + 1, 'one look-up for the attempt: the connection asks no resolver again');
    });
  }

  it('still refuses link-local (the metadata service), multicast and unspecified addresses at PUT', async () => {
    const { jwt } = await createAddress(server);
    for (const url of ['http://169.254.169.254/', 'http://[fe80::1]/', 'http://224.0.0.1/', 'http://0.0.0.0/', 'http://[::]/']) {
      const res = await request(server.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url } });
      assert.equal(res.status, 400, `${url}: ${res.text}`);
    }
  });
});
