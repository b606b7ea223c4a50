// CORS as a browser enforces it (CORS_ORIGINS; docs/api.md "Cross-origin requests"): a
// page of a listed origin, served by a local HTTP server on another port, calls the API
// with fetch in Chromium. Every method a route takes must pass the browser's preflight:
// reading mail, marking it read (PATCH), setting a webhook (PUT), deleting. A page of an
// origin not listed is refused by the browser.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { createAddress, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { CHROMIUM_PATH, skipUnless } from '../helpers/services.js';

const skip = skipUnless('chromium');

/** A server of blank pages, one origin per server. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
}

describe('CORS in Chromium', { timeout: 120_000 }, () => {
  let api: TestServer;
  let browser: Browser;
  let listed: { server: Server; origin: string };
  let other: { server: Server; origin: string };

  before(async () => {
    if (skip) return;
    listed = await pageServer();
    other = await pageServer();
    api = await startTestServer({ CORS_ORIGINS: listed.origin });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await api?.close();
    for (const s of [listed, other]) if (s) await new Promise((r) => s.server.close(r));
  });

  /** Each call made with fetch by a page of `origin`, with the Bearer token: its status, or the browser's refusal. */
  async function fromPage(origin: string, jwt: string, calls: Call[]): Promise<(number | string)[]> {
    const page = await browser.newPage();
    try {
      await page.goto(origin);
      return await page.evaluate(
        async ({ base, jwt, calls }) => {
          const out: (number | string)[] = [];
          for (const c of calls) {
            try {
              const headers: Record<string, string> = { authorization: `Bearer ${jwt}` };
              if (c.body !== undefined) headers['content-type'] = 'application/json';
              const res = await fetch(base + c.path, { method: c.method, headers, body: c.body === undefined ? undefined : JSON.stringify(c.body) });
              out.push(res.status);
            } catch (err) {
              out.push(`refused: ${(err as Error).name}`);
            }
          }
          return out;
        },
        { base: api.httpUrl, jwt, calls },
      );
    } finally {
      await page.close();
    }
  }

  it('a listed origin\'s page reads, marks read (PATCH), sets a webhook (PUT) and deletes a mail', { skip }, async () => {
    const inbox = await createAddress(api);
    await sendMail(api.smtpPort, { to: [inbox.address], message: 'Subject: cors\r\n\r\nbody\r\n' });
    const list = await request(api.httpUrl, '/api/mails?limit=10&offset=0', { jwt: inbox.jwt });
    const uuid = list.json.results[0].uuid as string;
    const statuses = await fromPage(listed.origin, inbox.jwt, [
      { method: 'GET', path: `/api/mail/${uuid}` },
      { method: 'PATCH', path: `/api/mail/${uuid}`, body: { seen: true } },
      { method: 'PUT', path: '/api/webhook', body: { url: 'https://1.1.1.1/hook' } },
    ]);
    assert.deepEqual(statuses, [200, 200, 200]);
    // Each took effect: not only let through.
    assert.equal((await request(api.httpUrl, `/api/mail/${uuid}`, { jwt: inbox.jwt })).json.seen, true);
    assert.equal((await request(api.httpUrl, '/api/webhook', { jwt: inbox.jwt })).json.url, 'https://1.1.1.1/hook');
    assert.deepEqual(await fromPage(listed.origin, inbox.jwt, [{ method: 'DELETE', path: `/api/mails/${uuid}` }]), [200]);
    assert.deepEqual((await request(api.httpUrl, '/api/mails?limit=10&offset=0', { jwt: inbox.jwt })).json.results, []);
  });

  it('a page of an origin not listed is refused by the browser, for reading and for PATCH alike', { skip }, async () => {
    const inbox = await createAddress(api);
    await sendMail(api.smtpPort, { to: [inbox.address], message: 'Subject: cors\r\n\r\nbody\r\n' });
    const uuid = (await request(api.httpUrl, '/api/mails?limit=10&offset=0', { jwt: inbox.jwt })).json.results[0].uuid as string;
    const statuses = await fromPage(other.origin, inbox.jwt, [
      { method: 'GET', path: `/api/mail/${uuid}` },
      { method: 'PATCH', path: `/api/mail/${uuid}`, body: { seen: true } },
    ]);
    assert.deepEqual(statuses, ['refused: TypeError', 'refused: TypeError']);
    const mail = await request(api.httpUrl, `/api/mail/${uuid}`, { jwt: inbox.jwt });
    assert.equal(mail.json.seen, false, 'the refused PATCH changed nothing');
  });
});
