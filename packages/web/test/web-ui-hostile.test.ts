// Hostile content in the reader (MailHog CVE-2022-50908, smtp4dev's srcdoc XSS):
// a subject, sender, file name and links built to run script must render as text,
// and the mail's HTML runs in a frame without scripts or the page's origin. And a
// mail that references a loopback HTTP server and a bare TCP listener (which would
// see a TLS ClientHello) by every construct that can load something: nothing reaches
// either before Load (packages/web/src/remote-content.ts); after it, only images and
// styles do.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { DOMAIN, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

describe('web UI: hostile mail renders as text', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('subject, sender, file name and javascript: links never run script', async () => {
    await page.goto(server.httpUrl);
    await page.getByLabel('Name (optional)').fill('ui-hostile');
    await page.getByRole('button', { name: 'New address' }).click();
    await page.getByText(`Waiting for mail to ui-hostile@${DOMAIN}`).waitFor();

    const subject = '<img src=x onerror="window.__pwned=1;alert(1)">Invoice';
    const raw = [
      `From: "<script>window.__pwned=2</script>" <evil@example.com>`,
      `To: ui-hostile@${DOMAIN}`,
      `Subject: ${subject}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="m"',
      '',
      '--m',
      'Content-Type: multipart/alternative; boundary="a"',
      '',
      '--a',
      'Content-Type: text/plain',
      '',
      'Open javascript:window.__pwned=3 now',
      '--a',
      'Content-Type: text/html',
      '',
      '<p>Hi <a href="javascript:window.__pwned=4;alert(4)">click</a><img src=x onerror="parent.__pwned=5;window.__pwned=5;this.dataset.pwned=5;alert(5)"><script>window.__pwned=6;document.body.dataset.pwned=6</script></p>',
      '--a--',
      '--m',
      'Content-Type: text/plain; name="<img src=x onerror=window.__pwned=7>.txt"',
      'Content-Disposition: attachment; filename="<img src=x onerror=window.__pwned=7>.txt"',
      '',
      'x',
      '--m--',
      '',
    ].join('\r\n');
    await sendMail(server.smtpPort, { to: [`ui-hostile@${DOMAIN}`], message: raw });
    const item = page.locator('.list li').filter({ hasText: 'Invoice' });
    await item.waitFor({ timeout: 5000 });
    assert.match((await item.textContent()) ?? '', /<img src=x onerror=/, 'the subject is shown as text');
    await item.locator('.item').click();
    await page.getByRole('heading', { name: subject }).waitFor();
    const frame = page.frameLocator('iframe.html');
    await frame.getByText('click').waitFor();
    // The frame's load event, not a pause: its inline script and the image's error (which hold
    // the event back) are done with, so a handler or script that ran has run by now.
    await (await (await page.locator('iframe.html').elementHandle())!.contentFrame())!.waitForLoadState('load');

    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'no script ran in the page');
    // The page and the mail's frame, each asked (an evaluation that fails fails the test).
    assert.deepEqual(page.frames().map((f) => f.url()), [`${server.httpUrl}/`, 'about:srcdoc']);
    for (const f of page.frames()) {
      assert.equal(await f.evaluate(() => (window as unknown as { __pwned?: number }).__pwned ?? 'none'), 'none', `no script ran in ${f.url()}`);
    }
    assert.equal(await frame.locator('[data-pwned]').count(), 0, 'no handler marked the frame');
    const sandbox = (await page.locator('iframe.html').getAttribute('sandbox')) ?? '';
    assert.doesNotMatch(sandbox, /allow-scripts|allow-same-origin/);
    assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'no javascript: link in the page itself');
    const shown = (await page.locator('main').textContent()) ?? '';
    assert.ok(shown.includes('<script>window.__pwned=2</script>'), `the sender's name is text: ${shown.slice(0, 300)}`);
    assert.ok(shown.includes('evil@example.com'), 'and the address beside it');
    assert.match((await page.locator('main').textContent()) ?? '', /<img src=x onerror=window\.__pwned=7>\.txt/, 'the file name is text');
  });

  it('nothing in a mail reaches the network before Load: no request, no connection, no TLS handshake; Load brings images and styles only', async () => {
    // The loopback HTTP server: every connection and request counted.
    const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const requests: string[] = [];
    let httpConnections = 0;
    const http = createHttpServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url?.endsWith('.css')) res.writeHead(200, { 'content-type': 'text/css' }).end('');
      else if (req.url?.endsWith('.png')) res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else res.writeHead(404).end();
    });
    http.on('connection', () => httpConnections++);
    // A bare TCP listener on an https:// URL: a connection (and a ClientHello) is all it would get.
    const tcpSeen: string[] = [];
    const sockets = new Set<Socket>();
    const tcp = createTcpServer((socket) => {
      sockets.add(socket);
      socket.once('data', (d) => tcpSeen.push(d[0] === 0x16 ? 'TLS ClientHello' : 'bytes'));
      tcpSeen.push('connection');
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const H = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const L = `http://localhost:${(http.address() as AddressInfo).port}`;
    const T = `https://127.0.0.1:${(tcp.address() as AddressInfo).port}`;
    const TL = `https://localhost:${(tcp.address() as AddressInfo).port}`;
    const tab = await browser.newPage();
    try {
      await tab.goto(server.httpUrl);
      await tab.getByLabel('Name (optional)').fill('ui-remote');
      await tab.getByRole('button', { name: 'New address' }).click();
      await tab.getByText(`Waiting for mail to ui-remote@${DOMAIN}`).waitFor();
      const html = [
        `<!doctype html><html manifest="${H}/manifest"><head>`,
        `<meta http-equiv="refresh" content="0;url=${H}/refresh">`,
        `<base href="${H}/base/">`,
        `<link rel="stylesheet" href="${H}/link-stylesheet.css">`,
        `<link rel="preconnect" href="${T}/preconnect"><link rel="dns-prefetch" href="${TL}/dns-prefetch">`,
        `<link rel="prefetch" href="${H}/prefetch"><link rel="preload" as="image" href="${H}/preload.png"><link rel="icon" href="${H}/icon.png">`,
        `<style>@import url("${H}/import.css"); .bg { background-image: url(${H}/style-url.png); height: 4px }`,
        ` @font-face { font-family: Remote; src: url(${H}/font.woff2); } .f { font-family: Remote; }`,
        ` .esc { background: \\75 rl(${H}/style-escaped.png); height: 4px } .set { background-image: image-set("${H}/image-set.png" 1x); height: 4px }</style>`,
        `</head><body background="${H}/body-background.png">`,
        '<p>Remote constructs below.</p>',
        `<iframe src="${T}/iframe"></iframe><iframe src="${TL}/iframe-by-name"></iframe><iframe src="${H}/iframe-http"></iframe><iframe src="${L}/iframe-http-by-name"></iframe>`,
        `<frameset><frame src="${H}/frame"></frameset>`,
        `<object data="${H}/object"></object><embed src="${H}/embed">`,
        `<img id="img" src="${H}/img.png" alt="" width="4" height="4"><img srcset="${H}/srcset.png 1x" alt=""><img src="relative.png" alt="">`,
        `<picture><source srcset="${H}/picture.png"><img alt=""></picture>`,
        `<video poster="${H}/poster.png" src="${H}/video.mp4"><track src="${H}/track.vtt"></video><audio src="${H}/audio.mp3" autoplay></audio>`,
        `<input type="image" src="${H}/input.png" alt="">`,
        `<table background="${H}/table-background.png"><tr><td background="${H}/td-background.png">cell</td></tr></table>`,
        '<div class="bg"></div><p class="f">font</p><div class="esc"></div><div class="set"></div>',
        `<div style="background-image:url(${H}/style-attr.png); height: 4px"></div>`,
        `<div style="--u: url(${H}/var.png); background-image: var(--u); height: 4px"></div>`,
        `<svg width="40" height="40"><image href="${H}/svg-image.png" width="4" height="4"/><image xlink:href="${H}/svg-xlink.png" width="4" height="4"/>`,
        `<use href="${H}/use.svg#a"/><filter id="f"><feImage href="${H}/feimage.png"/></filter><rect width="4" height="4" fill="url(${H}/fill.svg#g)" filter="url(#f)"/>`,
        `<image width="4" height="4"><set attributeName="href" to="${H}/smil.png"/></image></svg>`,
        `<form action="${H}/form"><button formaction="${H}/formaction">Send</button></form>`,
        `<p><a href="${T}/link" ping="${H}/ping">A link</a></p>`,
        '</body></html>',
      ].join('\r\n');
      const raw = ['From: Tracker <t@tracker.example>', `To: ui-remote@${DOMAIN}`, 'Subject: Tracked', 'MIME-Version: 1.0', 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n');
      await sendMail(server.smtpPort, { to: [`ui-remote@${DOMAIN}`], message: raw });
      await tab.locator('.list li').filter({ hasText: 'Tracked' }).locator('.item').click();
      const frame = tab.frameLocator('iframe.html');
      await frame.getByText('Remote constructs below.').waitFor();
      await tab.getByText('Remote content blocked.').waitFor();
      // Hovering and pressing a link is no reason to connect either (clicking it is).
      await frame.getByText('A link').hover();
      // Absence, by a signal: the frame's load event waits for every image, style sheet, font and
      // background its document asked for. What does not hold it back (preconnect, prefetch, pings,
      // frames' own loads) stays out after Load as well, and that is checked below, over both phases.
      await tab.frames()[1]!.waitForLoadState('load');
      assert.deepEqual({ requests, httpConnections, tcpSeen }, { requests: [], httpConnections: 0, tcpSeen: [] }, 'nothing before Load');

      await tab.getByRole('button', { name: 'Load' }).click();
      await frame.getByText('Remote constructs below.').waitFor();
      // Images and styles come, as before.
      const expected = ['/img.png', '/style-attr.png', '/style-url.png', '/link-stylesheet.css', '/import.css', '/svg-image.png', '/body-background.png'];
      const until = Date.now() + 15_000;
      while (Date.now() < until && !expected.every((u) => requests.includes(u))) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(expected.filter((u) => !requests.includes(u)), [], `loaded after Load: ${JSON.stringify(requests)}`);
      const imageWidth = async () => frame.locator('#img').evaluate((img) => (img as HTMLImageElement).naturalWidth);
      while (Date.now() < until && (await imageWidth()) === 0) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await imageWidth(), 1, 'the remote image is shown');
      const allowed = new Set([...expected, '/srcset.png', '/picture.png', '/poster.png', '/input.png', '/table-background.png', '/td-background.png', '/var.png', '/svg-xlink.png', '/style-escaped.png', '/image-set.png', '/font.woff2']);
      assert.deepEqual(requests.filter((u) => !allowed.has(u)), [], 'frames, objects, media, preloads, refresh, base, SVG references and forms stay out after Load too');
      assert.deepEqual(tcpSeen, [], 'no connection to the https:// listener, before or after Load');
    } finally {
      await tab.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => http.close(r));
      await new Promise((r) => tcp.close(r));
    }
  });
});
