// The Report tab of the web UI (Chromium): fetched only when opened, a line per section
// with its verdict, the content section failing on a <script> with that finding, details
// on demand, the link check against a loopback HTTP server of the test (a 200 and a 404:
// ok and broken), and a plain error line when the report is refused (429).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createAddress, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

const htmlMail = (to: string, subject: string, html: string) =>
  [`Subject: ${subject}`, 'From: Shop <shop@store.example>', `To: ${to}`, 'Message-ID: <report@store.example>', 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n');

describe('web UI: the Report tab', { skip: !ready && 'Chromium is not installed', timeout: 180_000 }, () => {
  let server: TestServer;
  let limited: TestServer;
  let browser: Browser;
  let links: Server;
  let linksUrl: string;
  const linkHits: string[] = [];

  before(async () => {
    server = await startTestServer({ REPORT_LINKS_ALLOW_PRIVATE: 'true' });
    // The report counts with the parsed view (RATE_LIMIT_PARSED_MAIL): opening the mail takes the one request allowed.
    limited = await startTestServer({ RATE_LIMIT_PARSED_MAIL: '1/3600' });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    links = createServer((req, res) => {
      linkHits.push(`${req.method} ${req.url}`);
      if (req.url === '/gone') res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<p>here</p>');
    });
    await new Promise<void>((r) => links.listen(0, '127.0.0.1', r));
    linksUrl = `http://127.0.0.1:${(links.address() as AddressInfo).port}`;
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => links?.close(r));
    await server?.close();
    await limited?.close();
  });

  async function openInbox(on: TestServer, name: string): Promise<{ page: Page; address: string; reportRequests: string[] }> {
    const made = await createAddress(on, { name });
    const page = await (await browser.newContext()).newPage();
    const reportRequests: string[] = [];
    page.on('request', (req) => {
      if (/\/api\/mail\/[^/]+\/report/.test(req.url())) reportRequests.push(req.url());
    });
    await openInboxLink(page, on.httpUrl, made.jwt);
    await page.getByText(`Waiting for mail to ${made.address}`).waitFor();
    return { page, address: made.address, reportRequests };
  }

  it('loads on opening the tab: the content section fails on the script, details open, links checked ok and broken', async () => {
    const { page, address, reportRequests } = await openInbox(server, 'report-ui');
    const html = `<p>Hello</p><script>alert(1)</script><p><img src="${linksUrl}/logo.png"></p><p><a href="${linksUrl}/found">Here</a> and <a href="${linksUrl}/gone">gone</a></p>`;
    await sendMail(server.smtpPort, { to: [address], message: htmlMail(address, 'Report me', html) });
    await page.locator('.list .subject', { hasText: 'Report me' }).click();
    const reportTab = page.getByRole('tab', { name: 'Report' });
    await reportTab.waitFor();
    await page.frameLocator('iframe.html').getByText('Hello').waitFor();
    assert.equal(reportRequests.length, 0, 'no report is asked for on opening the mail');

    // The tab is reached with the keyboard like the others.
    await page.getByRole('tab', { name: 'HTML' }).focus();
    await page.keyboard.press('End');
    assert.equal(await reportTab.getAttribute('aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Report');

    const content = page.locator('details.report-section[data-section="content"]');
    await content.waitFor();
    assert.equal(reportRequests.length, 1);
    assert.doesNotMatch(reportRequests[0]!, /links=check/);
    const summary = content.locator('summary');
    assert.equal(await summary.locator('.verdict').getAttribute('data-verdict'), 'fail');
    assert.match((await summary.textContent()) ?? '', /Content.*fail.*[1-9]\d* fail, [1-9]\d* warn/);
    // Every section has its line, each with a verdict in words.
    for (const section of ['spam', 'html', 'links', 'content', 'sender']) {
      const verdict = page.locator(`details[data-section="${section}"] > summary .verdict`);
      assert.match((await verdict.textContent()) ?? '', /pass|warn|fail|unavailable/, section);
    }
    assert.match((await page.locator('details[data-section="spam"] > summary').textContent()) ?? '', /unavailable/, 'no scanner is set');

    // Details on demand: the findings are hidden until the section is opened.
    const script = content.locator('li[data-rule="script"]');
    assert.equal(await script.isVisible(), false);
    await summary.click();
    await script.waitFor();
    assert.match((await script.textContent()) ?? '', /fail.*1 <script> element/);
    const alt = content.locator('li[data-rule="img-alt"]');
    assert.match((await alt.textContent()) ?? '', /warn.*no alt attribute.*Evidence:.*\/logo\.png/);
    // What the mail says is shown as text, never parsed as markup.
    assert.equal(await page.locator('.report script').count(), 0);

    const linksSection = page.locator('details[data-section="links"]');
    assert.match((await linksSection.locator('summary').textContent()) ?? '', /3 links, not checked/);
    await linksSection.locator('summary').click();
    const row = (path: string, kind: string) => linksSection.locator('tbody tr', { has: page.locator('td.url', { hasText: new RegExp(`${path.replace('.', '\\.')}$`) }) }).filter({ hasText: kind });
    assert.match((await row('/gone', 'link').textContent()) ?? '', /not checked/);
    assert.equal(linkHits.length, 0, `nothing fetched before Check links: ${linkHits.join(', ')}`);
    await linksSection.getByRole('button', { name: 'Check links' }).click();
    await row('/gone', 'link').locator('td.link-broken').waitFor();
    assert.match((await row('/gone', 'link').textContent()) ?? '', /broken\s*404/);
    assert.match((await row('/found', 'link').textContent()) ?? '', /ok\s*200/);
    assert.match((await row('/logo.png', 'image').textContent()) ?? '', /ok\s*200/);
    assert.match((await linksSection.locator('summary').textContent()) ?? '', /3 links, 1 broken/);
    assert.equal(await linksSection.locator('summary .verdict').getAttribute('data-verdict'), 'fail');
    assert.ok(reportRequests.at(-1)?.endsWith('?links=check'), `asked ${reportRequests.at(-1)}`);
    assert.ok(linkHits.some((h) => h.endsWith(' /gone')) && linkHits.some((h) => h.endsWith(' /found')), `the server fetched ${linkHits.join(', ')}`);
    // The sections opened stay open across the new answer.
    assert.equal(await content.evaluate((d) => (d as HTMLDetailsElement).open), true);

    // Back and forth between tabs: the report is not asked for again.
    const asked = reportRequests.length;
    await page.getByRole('tab', { name: 'Text' }).click();
    await page.locator('pre.text').waitFor();
    await reportTab.click();
    await content.waitFor();
    assert.equal(reportRequests.length, asked);
    await page.context().close();
  });

  it('a refused report (429) is a plain error line', async () => {
    const { page, address } = await openInbox(limited, 'report-limited');
    await sendMail(limited.smtpPort, { to: [address], message: htmlMail(address, 'Too many', '<p>Once</p>') });
    await page.locator('.list .subject', { hasText: 'Too many' }).click();
    await page.frameLocator('iframe.html').getByText('Once').waitFor();
    await page.getByRole('tab', { name: 'Report' }).click();
    const alert = page.locator('[role="tabpanel"] [role="alert"]');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /^The report could not be made: .*try again in/);
    assert.equal(await page.locator('details.report-section').count(), 0);
    await page.context().close();
  });
});
