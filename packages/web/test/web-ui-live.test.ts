// The page keeps showing new mail when its event stream is refused or drops: it
// says so, polls meanwhile, and reconnects by itself once the server admits it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { openEventStream, type EventStream } from '../../server/test/helpers/event-stream.js';
import { createAddress, DOMAIN, message, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

describe('web UI: the live connection recovers by itself', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const hogs: EventStream[] = [];

  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    // Two streams per client, so that this test can take them all from the page's address (127.0.0.1).
    server = await startTestServer({ EVENTS_PER_CLIENT: '2' });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
  });
  after(async () => {
    hogs.forEach((h) => h.close());
    await browser?.close();
    await server?.close();
  });

  it('a refused stream is reported, mail still shows up (polling), and the stream comes back when admitted', async () => {
    // Another inbox of the same client holds every stream the server allows it.
    const other = await createAddress(server);
    for (let i = 0; i < 2; i++) hogs.push(await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${other.jwt}` }));
    assert.deepEqual(
      hogs.map((h) => h.status),
      [200, 200],
    );

    await page.goto(server.httpUrl);
    await page.getByLabel('Name (optional)').fill('ui-live');
    await page.getByRole('button', { name: 'New address' }).click();
    await page.getByText(`Waiting for mail to ui-live@${DOMAIN}`).waitFor();
    const status = page.getByRole('status').filter({ hasText: 'Live updates interrupted' });
    await status.waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.live.on').count(), 0);

    await sendMail(server.smtpPort, { to: [`ui-live@${DOMAIN}`], message: message({ Subject: 'while refused' }, 'still here') });
    await page.locator('.list li').filter({ hasText: 'while refused' }).waitFor({ timeout: 8000 });

    // Free the streams: the page reconnects by itself (within its back-off, at most 30 s).
    hogs.splice(0).forEach((h) => h.close());
    await page.locator('.live.on').waitFor({ timeout: 35_000 });
    assert.equal(await status.count(), 0, 'the interruption notice is gone');
    // And mail arrives over the stream again.
    await sendMail(server.smtpPort, { to: [`ui-live@${DOMAIN}`], message: message({ Subject: 'live again' }, 'x') });
    await page.locator('.list li').filter({ hasText: 'live again' }).waitFor({ timeout: 3000 });
  });
});
