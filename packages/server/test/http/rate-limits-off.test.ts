// RATE_LIMITS=off (docs/deploy.md "Configuration"; docs/decisions.md "Rate limits") turns off
// every per-client limit: each HTTP route's RATE_LIMIT_<ROUTE> and SMTP's per-window
// messages, recipients and bytes. The same server with RATE_LIMITS=on, every limit
// set to 2 per minute, refuses the third request of every route and the request past
// each SMTP limit, so the test shows the switch and not a configuration that never
// limited anything.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RATE_LIMIT_ROUTES, type RateLimitRoute } from '../../src/config/index.js';
import { openEventStream } from '../helpers/event-stream.js';
import { CookieJar, message, request, serversStoppedAfter, SmtpClient, type HttpResult, type TestServer } from '../helpers/harness.js';
import { solvedToken } from '../helpers/pow.js';
import { ADMIN_TOKEN } from '../helpers/admin.js';

/** Every limit at 2 per window, so the third of anything is past it; addresses need a proof of work, so GET /api/challenge counts too. */
const TIGHT = {
  CHALLENGE: 'pow',
  ADMIN_TOKEN,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  // A sandbox for the Mailpit- and MailHog-compatible APIs.
  SANDBOXES: 'rl-box:rl-box-secret',
  MCP: 'on',
  ...Object.fromEntries(Object.keys(RATE_LIMIT_ROUTES).map((route) => [`RATE_LIMIT_${route}`, '2/60'])),
  SMTP_RATE_MESSAGES: '2/60',
  SMTP_RATE_RECIPIENTS: '2/60',
  SMTP_RATE_BYTES: '4000/60',
};

/** The address the measured requests come from; setup comes from others, so that it spends none of its budget. */
const CLIENT = '127.0.0.1';
let setupHost = 10;
const setupAddress = () => `127.0.0.${setupHost++}`;

interface Inbox {
  address: string;
  jwt: string;
  jar: CookieJar;
}

async function newInbox(server: TestServer): Promise<Inbox> {
  const jar = new CookieJar();
  const localAddress = setupAddress();
  const res = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { cf_token: await solvedToken(server.httpUrl, localAddress) }, jar, localAddress });
  assert.equal(res.status, 200, res.text);
  return { ...(res.json as { address: string; jwt: string }), jar };
}

/** One SMTP transaction from `from`: the reply that ended it (the first that was not a success) and its stage. */
async function transaction(server: TestServer, from: string, recipients: string[], body: string): Promise<{ stage: string; code: number }> {
  const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', from);
  try {
    assert.equal((await smtp.command('EHLO client.test')).code, 250);
    const steps: [string, string, number][] = [['MAIL', 'MAIL FROM:<s@example.org>', 250], ...recipients.map((r): [string, string, number] => ['RCPT', `RCPT TO:<${r}>`, 250]), ['DATA', 'DATA', 354]];
    for (const [stage, line, expected] of steps) {
      const r = await smtp.command(line);
      if (r.code !== expected) return { stage, code: r.code };
    }
    return { stage: 'end of DATA', code: (await smtp.data(message({ Subject: 'limits' }, body))).code };
  } finally {
    await smtp.quit();
  }
}

async function openStream(server: TestServer, jwt: string): Promise<HttpResult> {
  const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` }, CLIENT);
  stream.close();
  return { status: stream.status, headers: new Headers(), text: stream.body, json: undefined, setCookies: [] };
}

describe('RATE_LIMITS=off', () => {
  const start = serversStoppedAfter();

  for (const mode of ['on', 'off'] as const) {
    it(`RATE_LIMITS=${mode}: ${mode === 'off' ? 'no HTTP route and no SMTP per-window limit refuses anything' : 'the same limits refuse the request past each of them'}`, async () => {
      const server = await start({ ...TIGHT, RATE_LIMITS: mode });
      const main = await newInbox(server);
      const cleared = await newInbox(server);
      const doomed = [await newInbox(server), await newInbox(server), await newInbox(server)];
      // A mail with an attachment, delivered from a setup address.
      const attached = [
        'Subject: attached',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        'see attached',
        '--b',
        'Content-Type: application/octet-stream; name="a.bin"',
        '',
        'bytes',
        '--b--',
        '',
      ].join('\r\n');
      const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', setupAddress());
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<s@example.org>', 250],
        [`RCPT TO:<${main.address}>`, 250],
        ['DATA', 354],
      ]);
      assert.equal((await smtp.data(attached)).code, 250);
      await smtp.quit();
      const listed = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: main.jwt, localAddress: setupAddress() });
      const uuid = listed.json.results[0].uuid as string;

      const get = (path: string, opts: Parameters<typeof request>[2] = {}) => request(server.httpUrl, path, { jwt: main.jwt, localAddress: CLIENT, ...opts });
      // The mail.tm-compatible API: an account to log in to, and new accounts (each with the bot check CHALLENGE asks for).
      const domain = main.address.split('@')[1]!;
      const mailtmAccount = async (name: string, localAddress: string) =>
        request(server.httpUrl, '/mailtm/accounts', { body: { address: `${name}@${domain}`, password: 'pw', cf_token: await solvedToken(server.httpUrl, setupAddress()) }, localAddress });
      assert.equal((await mailtmAccount('mt-login', setupAddress())).status, 201);
      // One request per route, the i-th of three; each must succeed unless limited.
      const routes: Record<RateLimitRoute, (i: number) => Promise<HttpResult>> = {
        NEW_ADDRESS: async () => request(server.httpUrl, '/api/new_address', { method: 'POST', body: { cf_token: await solvedToken(server.httpUrl, setupAddress()) }, localAddress: CLIENT }),
        CHALLENGE: () => get('/api/challenge'),
        // The list, the long poll and the event stream share one budget.
        MAILS: (i) => [() => get('/api/mails?limit=10&offset=0'), () => get('/api/mails/wait?since=0&timeout=0'), () => openStream(server, main.jwt)][i]!(),
        MAIL: () => get(`/api/mail/${uuid}`),
        PARSED_MAIL: () => get(`/api/mail/${uuid}/parsed`),
        SETTINGS: () => get('/api/settings'),
        SWITCH_ADDRESS: () => request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: main.address }, jar: main.jar, localAddress: CLIENT }),
        DELETE_ADDRESS: (i) => request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: doomed[i]!.jwt, localAddress: CLIENT }),
        CLEAR_INBOX: () => request(server.httpUrl, '/api/clear_inbox', { method: 'DELETE', jwt: cleared.jwt, localAddress: CLIENT }),
        ATTACHMENT: () => get(`/api/attachment/${uuid}/0`),
        // Only wrong tokens count under RATE_LIMIT_ADMIN (the right one is never refused): each is a 401 unless limited.
        ADMIN: () => get('/api/admin/stats', { jwt: undefined, headers: { authorization: `Bearer wrong-${ADMIN_TOKEN}` } }),
        MAILTM_TOKEN: () => request(server.httpUrl, '/mailtm/token', { body: { address: `mt-login@${domain}`, password: 'pw' }, localAddress: CLIENT }),
        MAILTM_ACCOUNTS: (i) => mailtmAccount(`mt-new-${i}`, CLIENT),
        MAILTM: () => request(server.httpUrl, '/mailtm/domains', { localAddress: CLIENT }),
        MAILTM_DOWNLOAD: (i) => get([`/mailtm/sources/${uuid}`, `/mailtm/messages/${uuid}/download`, `/mailtm/messages/${uuid}/attachment/ATTACH000001`][i]!, { jwt: undefined, headers: { authorization: `Bearer ${main.jwt}` } }),
        MAILPIT: () => get('/mailpit/api/v1/info', { jwt: undefined, headers: { authorization: `Basic ${Buffer.from('rl-box:rl-box-secret').toString('base64')}` } }),
        MAILHOG: () => get('/mailhog/api/v2/messages', { jwt: undefined, headers: { authorization: `Basic ${Buffer.from('rl-box:rl-box-secret').toString('base64')}` } }),
        WEBHOOK: (i) => [() => get('/api/webhook', { method: 'PUT', body: { url: 'http://127.0.0.1:8081/hook' } }), () => get('/api/webhook'), () => get('/api/webhook/deliveries')][i]!(),
        // An MCP session's first message, each time.
        MCP: () => get('/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rl', version: '1' } } }, headers: { accept: 'application/json, text/event-stream' } }),
        SANDBOX_TOKEN: () => request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'rl-box', password: 'rl-box-secret' }, localAddress: CLIENT }),
        SANDBOX: async (i) => {
          const jwt = (await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'rl-box', password: 'rl-box-secret' }, localAddress: setupAddress() })).json.jwt as string;
          return [() => get('/api/sandbox', { jwt }), () => get('/api/sandbox/chaos', { jwt }), () => get('/api/sandbox/chaos', { method: 'PUT', jwt, body: {} })][i]!();
        },
      };
      assert.deepEqual(Object.keys(routes).sort(), Object.keys(RATE_LIMIT_ROUTES).sort(), 'every rate-limited route is exercised');

      for (const [route, send] of Object.entries(routes)) {
        for (let i = 0; i < 3; i++) {
          const res = await send(i);
          const limited = mode === 'on' && i === 2;
          if (limited) assert.equal(res.status, 429, `${route} #${i + 1}: ${res.status} ${res.text}`);
          // Every request is one that succeeds (the wait finds the mail already there): 200 (201 for a new mail.tm account),
          // but for ADMIN's wrong token, which is 401.
          else assert.equal(res.status, route === 'MAILTM_ACCOUNTS' ? 201 : route === 'ADMIN' ? 401 : 200, `${route} #${i + 1}: ${res.status} ${res.text}`);
        }
      }

      // SMTP, each limit from a client of its own (they are per client).
      const messages = [];
      for (let i = 0; i < 3; i++) messages.push(await transaction(server, '127.0.0.2', [main.address], 'x'));
      const recipients = await transaction(server, '127.0.0.3', [main.address, cleared.address, main.address], 'x');
      const bytes = [];
      for (let i = 0; i < 2; i++) bytes.push(await transaction(server, '127.0.0.4', [main.address], 'y'.repeat(2500)));
      const done = { stage: 'end of DATA', code: 250 };
      if (mode === 'off') {
        assert.deepEqual(messages, [done, done, done], 'SMTP_RATE_MESSAGES');
        assert.deepEqual(recipients, done, 'SMTP_RATE_RECIPIENTS');
        assert.deepEqual(bytes, [done, done], 'SMTP_RATE_BYTES');
      } else {
        assert.deepEqual(messages, [done, done, { stage: 'MAIL', code: 421 }], 'SMTP_RATE_MESSAGES');
        assert.deepEqual(recipients, { stage: 'RCPT', code: 452 }, 'SMTP_RATE_RECIPIENTS');
        assert.deepEqual(bytes, [done, { stage: 'end of DATA', code: 452 }], 'SMTP_RATE_BYTES');
      }
    });
  }
});
