// Takes the README's screenshots (docs/screenshots/): the inbox with a mail open, in
// the light and the dark theme, and on a phone. Run after `npm run build`:
//   node --import tsx packages/server/scripts/screenshots.ts
// It starts its own server on free ports with a throwaway data directory, and
// Debian's Chromium (CHROMIUM_PATH to use another).
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createAddress, sendMail, startTestServer } from '../test/helpers/harness.js';

const OUT = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));
const server = await startTestServer();
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const made = await createAddress(server, { name: 'demo' });
  const mail = (subject: string, from: string, html: string) =>
    [`Subject: ${subject}`, `From: ${from}`, `To: ${made.address}`, 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n');
  await sendMail(server.smtpPort, { to: [made.address], message: mail('Weekly digest', 'News <news@example.org>', '<h1>This week</h1><p>Five stories you missed.</p>') });
  await sendMail(server.smtpPort, { to: [made.address], message: mail('Your receipt', 'Shop <orders@shop.example>', '<p>Thanks for your order #48213.</p>') });
  await sendMail(server.smtpPort, {
    to: [made.address],
    message: mail(
      'Confirm your email address',
      'Example App <no-reply@app.example>',
      '<h2>Welcome!</h2><p>Your verification code is <b>482913</b>.</p><p><a href="https://app.example/verify?t=abc">Confirm my address</a></p>',
    ),
  });
  for (const [name, options] of [
    ['inbox-light', { viewport: { width: 1200, height: 720 }, colorScheme: 'light' }],
    ['inbox-dark', { viewport: { width: 1200, height: 720 }, colorScheme: 'dark' }],
    ['phone', { viewport: { width: 360, height: 640 }, colorScheme: 'light', deviceScaleFactor: 2 }],
  ] as const) {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await page.goto(`${server.httpUrl}/#token=${made.jwt}`);
    await page.locator('.list .subject', { hasText: 'Confirm your email address' }).click();
    await page.frameLocator('iframe.html').getByText('Welcome!').waitFor();
    await page.screenshot({ path: `${OUT}${name}.png` });
    process.stdout.write(`wrote docs/screenshots/${name}.png\n`);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
