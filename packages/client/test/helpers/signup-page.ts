// A small web application with a sign-up page, for the MCP tests' agent to sign up on:
// GET /signup is the form, POST /signup (email=...) mails a verification code and link
// to the address over real SMTP, as an application would, and says so on the page.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomInt } from 'node:crypto';
import { send, type SmtpTarget } from './mail.js';

export interface SignupPage {
  url: string;
  /** What each sign-up mailed, in order. */
  sent: { to: string; code: string; link: string }[];
  close(): Promise<void>;
}

const FORM = '<!doctype html><title>Sign up</title><form method="post" action="/signup"><label>Email <input name="email" type="email"></label><button>Sign up</button></form>';

export async function startSignupPage(smtp: SmtpTarget): Promise<SignupPage> {
  const sent: SignupPage['sent'] = [];
  const server: Server = createServer((req, res) => {
    if (req.url !== '/signup') return void res.writeHead(404).end('Not found.');
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/html' }).end(FORM);
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const to = new URLSearchParams(body).get('email') ?? '';
      const code = String(randomInt(100_000, 1_000_000));
      const link = `https://app.example/verify?t=${randomBytes(8).toString('hex')}`;
      send(smtp, {
        from: 'App <app@example.com>',
        to,
        subject: 'Verify your email',
        text: `Welcome! Your verification code is ${code}.\nOr open ${link}\n\nUnsubscribe: https://app.example/unsubscribe`,
        html: `<p>Welcome! Your verification code is <b>${code}</b>.</p><p><a href="${link}">Verify your email</a></p><img src="https://tracker.example/open.gif"><p><a href="https://app.example/unsubscribe">Unsubscribe</a></p>`,
      }).then(
        () => {
          sent.push({ to, code, link });
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>We sent a code to ${to}.</p>`);
        },
        (err: Error) => res.writeHead(500).end(err.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
