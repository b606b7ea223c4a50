// A sign-up that mails a verification code, end to end in Chromium: the page (served
// here) sends the code over SMTP to the `inbox` fixture's address, the test reads it
// with the SDK and types it in. Run by ../playwright.test.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { expect, TempInboxClient, TempInboxError, test } from '@temp-inbox/client/playwright';

const smtpPort = Number(process.env['TEMP_INBOX_SMTP_PORT']);
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>Acme</title></head><body>${body}</body></html>`;

/** A tiny sign-up site: email, then the 6-digit code mailed to it. */
function startSignupSite(): Promise<{ url: string; server: Server }> {
  const codes = new Map<string, string>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const email = form.get('email') ?? '';
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.method === 'POST' && req.url === '/signup') {
        const code = String(100000 + Math.floor(Math.random() * 900000));
        codes.set(email, code);
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
        transport
          .sendMail({
            from: 'Acme Accounts <accounts@acme.test>',
            to: email,
            subject: 'Your Acme verification code',
            text: `Welcome to Acme!\n\nYour verification code is ${code}.\n\nNot you? https://acme.test/unsubscribe`,
          })
          .then(
            () =>
              res.end(
                page(`<p>Enter the code we sent to ${escape(email)}</p><form method="post" action="/verify"><input type="hidden" name="email" value="${escape(email)}"><label>Code <input name="code" autocomplete="one-time-code"></label><button>Verify</button></form>`),
              ),
            (err: Error) => res.end(page(`<p>Could not send the mail: ${escape(err.message)}</p>`)),
          )
          .finally(() => transport.close());
        return;
      }
      if (req.method === 'POST' && req.url === '/verify') {
        const ok = codes.has(email) && codes.get(email) === form.get('code');
        res.end(page(ok ? `<h1>Welcome, ${escape(email)}! Your email is verified.</h1>` : '<p>That code is wrong.</p>'));
        return;
      }
      res.end(page('<h1>Join Acme</h1><form method="post" action="/signup"><label>Email <input name="email" type="email"></label><button>Sign up</button></form>'));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

let site: { url: string; server: Server };
const seen: { address: string; token: string }[] = [];

test.beforeAll(async () => {
  site = await startSignupSite();
});

test.afterAll(async () => {
  await new Promise((resolve) => site.server.close(resolve));
  // Each test had its own inbox, and the fixture deleted it afterwards.
  expect(new Set(seen.map((s) => s.address)).size).toBe(seen.length);
  const client = new TempInboxClient({ baseUrl: process.env['TEMP_INBOX_URL']! });
  for (const { token } of seen) {
    const error = await client.openInbox(token).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error instanceof TempInboxError && error.status).toBe(401);
  }
});

for (const run of ['first', 'second']) {
  test(`signs up with the code mailed to the fixture's inbox (${run} run)`, async ({ page, inbox }) => {
    seen.push({ address: inbox.address, token: inbox.token });
    await page.goto(site.url);
    await page.getByLabel('Email').fill(inbox.address);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect(page.getByText(`Enter the code we sent to ${inbox.address}`)).toBeVisible();

    const code = await inbox.waitForCode({ from: 'acme.test', subject: 'verification code', timeout: 15_000 });
    expect(code).toMatch(/^\d{6}$/);
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(page.getByRole('heading', { name: `Welcome, ${inbox.address}! Your email is verified.` })).toBeVisible();
  });
}
