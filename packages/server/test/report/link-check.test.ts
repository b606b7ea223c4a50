// The report's link check (report/link-check.ts) refused by the address guard it shares
// with webhooks: each reason names the link, never a webhook, as the guard words it when
// asked for a link (webhooks/guard.ts `as`), and a webhook's refusal keeps its own words.
// The names are resolved by the service's own resolver against a real DNS server on
// loopback (helpers/webhook-dns.ts); nothing is fetched beyond loopback.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { LinkEntry } from '@temp-inbox/api';
import { checkLinks, LINK_CHECK_DEFAULTS, type LinkCheckOptions } from '../../src/report/link-check.js';
import { parseWebhookUrl } from '../../src/domain/webhook-url.js';
import { resolveTarget } from '../../src/webhooks/guard.js';
import { startWebhookDns, type WebhookDns } from '../helpers/webhook-dns.js';

describe('link check refusals name the link', () => {
  let dns: WebhookDns;
  let target: Server;
  let port: number;
  before(async () => {
    dns = await startWebhookDns();
    dns.zone.set('loopback.links.test', ['127.0.0.1']);
    dns.zone.set('private.links.test', ['10.1.2.3']);
    target = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    port = (target.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((r) => target.close(r));
    await dns.close();
  });

  const opts = (allowPrivate: boolean): LinkCheckOptions => ({ ...LINK_CHECK_DEFAULTS, timeoutMs: 3000, allowPrivate, lookup: dns.lookup });
  const links = (urls: string[]): LinkEntry[] => urls.map((url) => ({ url, kind: 'link' }));

  it('gives each refused link the guard’s reason in words about links', async () => {
    const urls = [
      `http://127.0.0.1:${port}/a`,
      'http://localhost/b',
      'http://[::1]/c',
      'http://10.0.0.1/d',
      'http://169.254.169.254/latest/meta-data',
      'http://loopback.links.test/e',
      'http://private.links.test/f',
      'http://nowhere.links.test/g',
      'http://mail.links.test:25/h',
      'http://user:pw@public.links.test/i',
    ];
    const checked = await checkLinks(links(urls), new Set(), opts(false));
    const reasons = checked.map((l) => [l.result, l.reason]);
    assert.deepEqual(reasons, [
      ['refused', "The link's host is a loopback address; links are only fetched from public addresses."],
      ['refused', "The link's host is a loopback address; links are only fetched from public addresses."],
      ['refused', "The link's host is a loopback address; links are only fetched from public addresses."],
      ['refused', "The link's host is a private-network address; links are only fetched from public addresses."],
      ['refused', "The link's host is a link-local address (such as the cloud metadata service at 169.254.169.254); links are only fetched from public addresses."],
      ['refused', "The link's host name resolves to a loopback address; links are only fetched from public addresses."],
      ['refused', "The link's host name resolves to a private-network address; links are only fetched from public addresses."],
      ['refused', "The link's host name does not resolve."],
      ['refused', "The link's port 25 is one browsers refuse to fetch from (mail, shell and similar services); use another port."],
      ['refused', 'The link must not contain a user name or password.'],
    ]);
    for (const l of checked) assert.doesNotMatch(l.reason ?? '', /webhook/i, l.url);
  });

  it('fetches a loopback link when private addresses are allowed (the refusal above was the guard’s)', async () => {
    const [link] = await checkLinks(links([`http://127.0.0.1:${port}/a`]), new Set(), opts(true));
    assert.deepEqual([link!.result, link!.status], ['ok', 204]);
  });

  it('a webhook refused by the same guard keeps the webhook’s words', async () => {
    await assert.rejects(resolveTarget(parseWebhookUrl('http://loopback.links.test/'), { allowPrivate: false, lookup: dns.lookup, timeoutMs: 3000 }), {
      message: 'The webhook host name resolves to a loopback address; webhooks are only sent to public addresses.',
    });
    assert.throws(() => parseWebhookUrl('http://h.links.test:25/'), { message: "The webhook URL's port 25 is one browsers refuse to fetch from (mail, shell and similar services); use another port." });
    assert.throws(() => parseWebhookUrl('http://h.links.test:25/', 'link'), { message: "The link's port 25 is one browsers refuse to fetch from (mail, shell and similar services); use another port." });
  });
});
