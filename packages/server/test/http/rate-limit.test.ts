// Per-IP, per-route rate limits (docs/api.md "Rate limits", "Errors"; docs/decisions.md "Rate limits",
// TRUST_PROXY). A case that never waits for a window to end has a 60 s window, which cannot
// end while it runs, however slow the machine; the cases that wait one out (hammering extends,
// quiet recovers) have 3 s windows, and sleeps there are the subject under test (window expiry).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { clientKey } from '../../src/http/rate-limit.js';
import { RATE_LIMIT_ROUTES, type RateLimitRoute } from '../../src/config/index.js';
import { openEventStream } from '../helpers/event-stream.js';
import { CookieJar, createAddress, DOMAIN, message, request, sendMail, startTestServer, type HttpResult, type RequestOptions, type TestServer } from '../helpers/harness.js';
import { REDIS_URL, skipUnless } from '../helpers/services.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';

const settings = (server: TestServer, jwt: string | undefined, opts: RequestOptions = {}) =>
  request(server.httpUrl, '/api/settings', { jwt, ...opts });

/** Asserts a 429 in the documented shape and returns its Retry-After in seconds. */
function assertLimited(res: HttpResult, what = 'request'): number {
  assert.equal(res.status, 429, `${what}: expected 429, got ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, `${what}: plain text`);
  assert.equal(res.json, undefined, `${what}: not JSON`);
  assert.ok(res.text.length > 0);
  const retryAfter = res.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, `${what}: Retry-After is integer seconds, got ${retryAfter}`);
  assert.ok(Number(retryAfter) >= 1, `${what}: Retry-After >= 1`);
  assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, `${what}: x-request-id`);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  return Number(retryAfter);
}

/** A 429 of the mail.tm-compatible API: mail.tm's error shape (JSON-LD by default), with Retry-After; returns it. */
function assertLimitedMailtm(res: HttpResult): number {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.headers.get('content-type'), 'application/ld+json; charset=utf-8');
  assert.equal(res.json['@type'], 'hydra:Error');
  assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
  return Number(res.headers.get('retry-after'));
}

function assertOk(res: HttpResult, what = 'request') {
  assert.equal(res.status, 200, `${what}: expected 200, got ${res.status} ${res.text}`);
}

/**
 * Trip, hammer, recover: the client is already limited. Keeps sending every
 * ~200 ms for longer than the window (4 s for a 3 s one) and expects 429 throughout,
 * then waits out Retry-After (+ margin) and expects the next request to pass.
 */
async function hammerThenRecover(send: (i: number) => Promise<HttpResult>, windowSeconds: number, hammerMs = windowSeconds * 1000 + 1000) {
  const started = Date.now();
  let retryAfter = 0;
  let i = 0;
  while (Date.now() - started < hammerMs) {
    await sleep(200);
    const res = await send(i++);
    retryAfter = assertLimited(res, `hammering at +${Date.now() - started} ms`);
    assert.ok(retryAfter <= windowSeconds, `Retry-After ${retryAfter} <= window ${windowSeconds}`);
  }
  assert.ok(i >= 5, `sent ${i} requests while hammering`);
  await sleep(retryAfter * 1000 + 300);
  return send(i);
}

/**
 * One server with RATE_LIMIT_SETTINGS=3/60 and RATE_LIMIT_NEW_ADDRESS=2/60 for the cases that
 * need no other limit; each is a client of its own (its own loopback address).
 */
let limits60: Promise<TestServer> | undefined;
const limits60Server = () => (limits60 ??= startTestServer({ RATE_LIMIT_SETTINGS: '3/60', RATE_LIMIT_NEW_ADDRESS: '2/60' }));
after(async () => (await limits60)?.close());
/** An address made from `localAddress` (createAddress, from another client). */
async function addressFrom(server: TestServer, localAddress: string): Promise<{ address: string; jwt: string }> {
  const res = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: {}, localAddress });
  assert.equal(res.status, 200, res.text);
  return res.json;
}

describe('rate limits: per IP and per route', () => {
  it('trips after max requests with a plain-text 429 and Retry-After; other routes and IPs are unaffected; hammering extends; quiet recovers', async () => {
    const server = await startTestServer({ RATE_LIMIT_SETTINGS: '3/3', RATE_LIMIT_MAILS: '3/60' });
    try {
      const { jwt } = await createAddress(server);
      for (let i = 1; i <= 3; i++) assertOk(await settings(server, jwt), `settings #${i}`);
      const retryAfter = assertLimited(await settings(server, jwt), 'settings #4');
      assert.equal(retryAfter, 3, 'Retry-After is the 3 s window');

      // Another rate-limited route keeps its own budget.
      assertOk(await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt }), 'mails after settings tripped');
      // Another source IP keeps its own budget.
      assertOk(await settings(server, jwt, { localAddress: '127.0.0.2' }), 'settings from 127.0.0.2');
      // A still-limited client stays limited on the tripped route.
      assertLimited(await settings(server, jwt), 'settings #5');

      const recovered = await hammerThenRecover(() => settings(server, jwt), 3);
      assertOk(recovered, 'after a quiet Retry-After');
      // A fresh window: the full budget again (1 used by the recovery request).
      assertOk(await settings(server, jwt), 'fresh window #2');
      assertOk(await settings(server, jwt), 'fresh window #3');
      assertLimited(await settings(server, jwt), 'fresh window #4');
    } finally {
      await server.close();
    }
  });

  it('a client that stays under the limit is never refused across windows', async () => {
    const server = await startTestServer({ RATE_LIMIT_SETTINGS: '3/1' });
    try {
      const { jwt } = await createAddress(server);
      for (let i = 1; i <= 3; i++) assertOk(await settings(server, jwt), `window 1 #${i}`);
      await sleep(1300);
      for (let i = 1; i <= 3; i++) assertOk(await settings(server, jwt), `window 2 #${i}`);
    } finally {
      await server.close();
    }
  });

  it('counts unauthenticated requests: the limit trips before auth', async () => {
    const server = await limits60Server();
    const client = { localAddress: '127.0.5.1' };
    for (let i = 1; i <= 3; i++) {
      const res = await settings(server, 'garbage', client);
      assert.equal(res.status, 401, `garbage token #${i}: ${res.status} ${res.text}`);
    }
    assertLimited(await settings(server, 'garbage', client), 'garbage token #4');
    assertLimited(await settings(server, undefined, client), 'no credentials');
    // Even a valid JWT from the same IP is now refused: the budget is the IP's.
    const { jwt } = await addressFrom(server, '127.0.5.2');
    assertLimited(await settings(server, jwt, client), 'valid jwt after 401s');
  });

  it('limits address creation (RATE_LIMIT_NEW_ADDRESS)', async () => {
    const server = await limits60Server();
    const create = (opts: RequestOptions = {}) => request(server.httpUrl, '/api/new_address', { method: 'POST', body: {}, ...opts });
    assertOk(await create(), 'creation #1');
    assertOk(await create(), 'creation #2');
    const limited = await create();
    assertLimited(limited, 'creation #3');
    assert.deepEqual(limited.setCookies, [], 'no cookies on a refused creation');
    assertOk(await create({ localAddress: '127.0.0.2' }), 'creation from another IP');
    // A requested name is not taken by a refused attempt.
    assertLimited(await create({ body: { name: 'limited-name' } }), 'named creation while limited');
    assertOk(await create({ body: { name: 'limited-name' }, localAddress: '127.0.0.3' }), 'the name is still free');
  });

  it('RATE_LIMIT_SETTINGS=0 disables the limit', async () => {
    const server = await startTestServer({ RATE_LIMIT_SETTINGS: '0', RATE_LIMIT_MAILS: '1/60' });
    try {
      const { jwt } = await createAddress(server);
      const results = await Promise.all(Array.from({ length: 50 }, () => settings(server, jwt)));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(50).fill(200),
      );
      // The other rules still apply.
      assertOk(await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt }));
      assertLimited(await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt }), 'mails #2');
    } finally {
      await server.close();
    }
  });
});

describe('rate limits: every route, at the limit and one past it', () => {
  // RATE_LIMIT_<ROUTE>=3/60 for each route: three requests from the case's client succeed,
  // each with its exact answer and effect; the fourth is a plain-text 429 with Retry-After 60
  // (the window) and has no effect. The cases share one server on which every route has that
  // limit (CHALLENGE=pow, which changes address creation, has a server of its own): budgets
  // are per route and per client, and each case is a client of its own (a loopback address
  // of its own, CLIENT) whose setup and checks come from fresh addresses (setup()), each with
  // budgets of its own. Names, inboxes and sandboxes are each case's own. A route added to
  // RATE_LIMIT_ROUTES without a case here fails the type check and the test.
  const MAX = 3;
  /** Each case's sandbox (SANDBOXES of the shared server), with its Basic credentials. */
  const sandbox = (name: string) => ({ name, password: `${name}-secret`, basic: `Basic ${Buffer.from(`${name}:${name}-secret`).toString('base64')}` });
  const BOXES = { MAILPIT: sandbox('rl-mailpit'), MAILHOG: sandbox('rl-mailhog'), SANDBOX_TOKEN: sandbox('rl-token'), SANDBOX: sandbox('rl-sandbox') };
  /** The client of the case under way: 127.0.1.<n>, the case's own. */
  let CLIENT = '';
  let setups = 0;
  /** A loopback address that nothing else uses (127.0.2.1, 127.0.2.2, ...), for one setup or check request. */
  const setup = (): RequestOptions => {
    setups++;
    return { localAddress: `127.0.${2 + Math.floor(setups / 250)}.${1 + (setups % 250)}` };
  };
  /** request, settings and adminRequest, from the case's client unless the options say otherwise. */
  const clientRequest = (base: string, path: string, opts: RequestOptions = {}) => request(base, path, { localAddress: CLIENT, ...opts });
  const clientSettings = (server: TestServer, jwt: string | undefined, opts: RequestOptions = {}) => clientRequest(server.httpUrl, '/api/settings', { jwt, ...opts });
  const clientAdmin = (server: TestServer, path: string, opts: RequestOptions = {}) => adminRequest(server, path, { localAddress: CLIENT, ...opts });
  /** createAddress, from a fresh address. */
  const setupAddress = async (server: TestServer, body: Record<string, unknown>, jar?: CookieJar) => {
    const res = await request(server.httpUrl, '/api/new_address', { method: 'POST', body, jar, ...setup() });
    assert.equal(res.status, 200, `new_address: ${res.status} ${res.text}`);
    return res.json as { address: string; jwt: string };
  };
  const attached = message({ Subject: 'with a file', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="b"' }, `--b\r\nContent-Type: text/plain\r\n\r\nsee the file\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename="f.bin"\r\n\r\n${Buffer.from('file bytes').toString('base64')}\r\n--b--\r\n`);

  interface Case {
    /** A server of its own with this environment (else the shared one). */
    own?: Record<string, string>;
    /** What the requests need, made from setup() addresses. */
    setup?: (server: TestServer) => Promise<Record<string, any>>;
    /** The i-th request (0-based) from this client. */
    send: (server: TestServer, ctx: Record<string, any>, i: number) => Promise<HttpResult>;
    /** The answer to each of the first MAX. */
    ok: (res: HttpResult, i: number, ctx: Record<string, any>) => void;
    /** After the refused request: what it would have done did not happen. */
    noEffect?: (server: TestServer, ctx: Record<string, any>) => Promise<void>;
    /** The mail.tm-compatible API answers its 429 in mail.tm's JSON shape, not in plain text. */
    mailtm?: true;
  }
  const status = (expected: number) => (res: HttpResult, i: number) => assert.equal(res.status, expected, `request ${i + 1}: ${res.status} ${res.text}`);
  const inbox = async (server: TestServer, withMail: string | false = attached) => {
    const created = await setupAddress(server, { name: `rl-${Math.random().toString(36).slice(2, 10)}` });
    if (withMail) await sendMail(server.smtpPort, { to: [created.address], message: withMail });
    const uuid = withMail ? ((await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: created.jwt, ...setup() })).json.results[0].uuid as string) : undefined;
    return { ...created, uuid };
  };

  const cases: Record<RateLimitRoute, Case> = {
    NEW_ADDRESS: {
      send: (server, _ctx, i) => clientRequest(server.httpUrl, '/api/new_address', { body: { name: `made-${i}` } }),
      ok: (res, i) => {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.address, `made-${i}@${DOMAIN}`);
      },
      noEffect: async (server) => {
        // The refused request neither took its name nor set a cookie.
        assert.equal((await clientRequest(server.httpUrl, '/api/new_address', { body: { name: `made-${MAX}` }, ...setup() })).status, 200);
      },
    },
    CHALLENGE: {
      own: { CHALLENGE: 'pow' },
      send: (server) => clientRequest(server.httpUrl, '/api/challenge'),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.json).sort(), ['algorithm', 'challenge', 'maxnumber', 'salt', 'signature']);
      },
    },
    MAILS: {
      // The list, the search, the long poll and the event stream share one budget.
      setup: (server) => inbox(server, message({ Subject: 'findable' }, 'x')),
      send: async (server, { jwt }, i) => {
        if (i === 0) return clientRequest(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt });
        if (i === 1) return clientRequest(server.httpUrl, '/api/mails/search?q=findable&limit=10&offset=0', { jwt });
        if (i === 2) return clientRequest(server.httpUrl, '/api/mails/wait?since=0&timeout=0', { jwt });
        const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` }, CLIENT);
        stream.close();
        const headers = new Headers(Object.entries(stream.headers).map(([k, v]) => [k, String(v)] as [string, string]));
        return { status: stream.status, headers, text: stream.body, json: undefined, setCookies: [] };
      },
      ok: (res, i) => {
        assert.equal(res.status, 200, `${['list', 'search', 'wait'][i]}: ${res.text}`);
        assert.equal(res.json.count, 1);
        assert.equal(JSON.parse(res.json.results[0].metadata).subject, 'findable');
      },
      noEffect: async (server, { jwt }) => {
        // And every other route of the budget is refused too.
        for (const path of ['/api/mails?limit=10&offset=0', '/api/mails/search?q=findable&limit=10&offset=0', '/api/mails/wait?since=0&timeout=0']) assertLimited(await clientRequest(server.httpUrl, path, { jwt }), path);
      },
    },
    MAIL: {
      setup: (server) => inbox(server),
      send: (server, { jwt, uuid }) => clientRequest(server.httpUrl, `/api/mail/${uuid}`, { jwt }),
      ok: (res, _i, { uuid }) => {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.uuid, uuid);
      },
    },
    PARSED_MAIL: {
      setup: (server) => inbox(server),
      send: (server, { jwt, uuid }) => clientRequest(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt }),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.subject, 'with a file');
      },
    },
    SETTINGS: {
      setup: (server) => inbox(server, false),
      send: (server, { jwt }) => clientSettings(server, jwt),
      ok: (res, _i, { address }) => {
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { address });
      },
    },
    SWITCH_ADDRESS: {
      // Switching and opening an inbox by its token share one budget.
      setup: async (server) => {
        const jar = new CookieJar();
        const made = [];
        for (let i = 0; i < 3; i++) made.push(await setupAddress(server, { name: `sw-${i}` }, jar));
        const outside = await setupAddress(server, { name: 'sw-outside' });
        return { jar, made, outside };
      },
      send: (server, { jar, made, outside }, i) =>
        i === 1 ? clientRequest(server.httpUrl, '/api/open_address', { body: { jwt: outside.jwt }, jar }) : clientRequest(server.httpUrl, '/api/switch_address', { body: { address: made[i % 3].address }, jar }),
      ok: (res, i, { made, outside }) => {
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { success: true, address: i === 1 ? outside.address : made[i % 3].address });
      },
      noEffect: async (server, { jar, made }) => {
        // The active address is still the one the third request switched to.
        assert.equal((await clientRequest(server.httpUrl, '/api/settings', { jar })).json.address, made[2].address);
      },
    },
    DELETE_ADDRESS: {
      setup: async (server) => ({ boxes: await Promise.all(Array.from({ length: MAX + 1 }, () => inbox(server, false))) }),
      send: (server, { boxes }, i) => clientRequest(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: boxes[i].jwt }),
      ok: status(200),
      noEffect: async (server, { boxes }) => {
        assert.equal((await clientSettings(server, boxes[MAX].jwt, setup())).status, 200, 'the fourth address still exists');
        assert.equal((await clientSettings(server, boxes[0].jwt, setup())).status, 401, 'the first is gone');
      },
    },
    CLEAR_INBOX: {
      setup: (server) => inbox(server),
      send: async (server, { jwt, address }, i) => {
        // A mail to clear before each request.
        if (i > 0) await sendMail(server.smtpPort, { to: [address], message: message({ Subject: `mail ${i}` }, 'x') });
        return clientRequest(server.httpUrl, '/api/clear_inbox', { method: 'DELETE', jwt });
      },
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { success: true });
      },
      noEffect: async (server, { jwt }) => {
        const left = await clientRequest(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt, ...setup() });
        assert.deepEqual(left.json.results.map((m: { metadata: string }) => JSON.parse(m.metadata).subject), [`mail ${MAX}`], 'the mail is still there');
      },
    },
    ATTACHMENT: {
      setup: (server) => inbox(server),
      send: (server, { jwt, uuid }) => clientRequest(server.httpUrl, `/api/attachment/${uuid}/0`, { jwt }),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.text, 'file bytes');
        assert.equal(res.headers.get('content-disposition'), 'attachment; filename=f.bin');
      },
    },
    MAILTM_TOKEN: {
      mailtm: true,
      setup: async (server) => {
        const made = await clientRequest(server.httpUrl, '/mailtm/accounts', { body: { address: `mt-login@${DOMAIN}`, password: 'right' }, ...setup() });
        assert.equal(made.status, 201, made.text);
        return {};
      },
      send: (server) => clientRequest(server.httpUrl, '/mailtm/token', { body: { address: `mt-login@${DOMAIN}`, password: 'right' } }),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.match(res.json.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      },
    },
    MAILTM: {
      // Every other /mailtm route shares one budget of its own (not our routes').
      mailtm: true,
      setup: async (server) => {
        const body = { address: `mt-reader@${DOMAIN}`, password: 'pw' };
        assert.equal((await clientRequest(server.httpUrl, '/mailtm/accounts', { body, ...setup() })).status, 201);
        return { token: (await clientRequest(server.httpUrl, '/mailtm/token', { body, ...setup() })).json.token };
      },
      send: (server, { token }, i) => clientRequest(server.httpUrl, ['/mailtm/messages', '/mailtm/me', '/mailtm/domains', '/mailtm/messages'][i]!, { headers: { authorization: `Bearer ${token}` } }),
      ok: (res) => assert.equal(res.status, 200, res.text),
      noEffect: async (server, { token }) => {
        assertLimitedMailtm(await clientRequest(server.httpUrl, '/mailtm/me', { headers: { authorization: `Bearer ${token}` } }));
        assertOk(await clientRequest(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: token }), 'our own list has its own budget');
      },
    },
    MAILPIT: {
      // Every /mailpit route shares one budget, counted before the Basic credentials are checked.
      send: (server, _ctx, i) =>
        i < MAX
          ? clientRequest(server.httpUrl, ['/mailpit/api/v1/info', '/mailpit/api/v1/messages', '/mailpit/api/v1/tags'][i]!, { headers: { authorization: BOXES.MAILPIT.basic } })
          : clientRequest(server.httpUrl, '/mailpit/api/v1/send', { body: { From: { Email: 'a@example.com' }, To: [{ Email: 'b@example.org' }], Subject: 'refused' }, headers: { authorization: BOXES.MAILPIT.basic } }),
      ok: (res) => assert.equal(res.status, 200, res.text),
      noEffect: async (server) => {
        const list = await clientRequest(server.httpUrl, '/mailpit/api/v1/messages', { headers: { authorization: BOXES.MAILPIT.basic }, ...setup() });
        assert.equal(list.json.total, 0, 'the refused send stored nothing');
      },
    },
    MAILHOG: {
      send: (server, _ctx, i) => clientRequest(server.httpUrl, '/mailhog/api/v2/messages', { headers: { authorization: i < MAX ? BOXES.MAILHOG.basic : 'Basic x' } }),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.total, 0);
      },
      noEffect: async (server) => assertOk(await clientRequest(server.httpUrl, '/mailpit/api/v1/info', { headers: { authorization: BOXES.MAILHOG.basic } }), "the Mailpit API's budget is its own"),
    },
    MAILTM_DOWNLOAD: {
      // A message's source, its .eml and its attachments: a budget apart from mail.tm's polling quota.
      mailtm: true,
      setup: async (server) => {
        const { jwt, uuid } = await inbox(server);
        return { jwt, uuid };
      },
      send: (server, { jwt, uuid }, i) =>
        clientRequest(server.httpUrl, [`/mailtm/sources/${uuid}`, `/mailtm/messages/${uuid}/download`, `/mailtm/messages/${uuid}/attachment/ATTACH000001`, `/mailtm/sources/${uuid}`][i]!, {
          headers: { authorization: `Bearer ${jwt}` },
        }),
      ok: (res) => assert.equal(res.status, 200, res.text),
      noEffect: async (server, { jwt }) => {
        assertOk(await clientRequest(server.httpUrl, '/mailtm/messages', { headers: { authorization: `Bearer ${jwt}` } }), 'the message list has mail.tm\'s budget');
      },
    },
    MAILTM_ACCOUNTS: {
      mailtm: true,
      send: (server, _ctx, i) => clientRequest(server.httpUrl, '/mailtm/accounts', { body: { address: `mt-${i}@${DOMAIN}`, password: 'pw' } }),
      ok: (res, i) => {
        assert.equal(res.status, 201, res.text);
        assert.equal(res.json.address, `mt-${i}@${DOMAIN}`);
      },
      noEffect: async (server) => {
        // The refused request did not take its name.
        assert.equal((await clientRequest(server.httpUrl, '/mailtm/accounts', { body: { address: `mt-${MAX}@${DOMAIN}`, password: 'pw' }, ...setup() })).status, 201);
      },
    },
    ADMIN: {
      // Wrong tokens on every /api/admin/* route share one budget; the right token spends
      // none of it, so it still works from an address whose wrong guesses are refused.
      setup: async (server) => {
        for (let i = 0; i < 2 * MAX; i++) assert.equal((await clientAdmin(server, '/api/admin/stats')).status, 200, 'the right token is not counted');
        return {};
      },
      send: (server, _ctx, i) =>
        i % 2
          ? clientAdmin(server, '/api/admin/stats', { headers: { authorization: `Bearer wrong-${ADMIN_TOKEN}` } })
          : clientAdmin(server, '/api/admin/blocks', { headers: { authorization: `Bearer wrong-${ADMIN_TOKEN}` }, body: { kind: 'sender', value: `blocked-${i}@spam.example` } }),
      ok: (res) => assert.equal(res.status, 401, res.text),
      noEffect: async (server) => {
        // The refused guesses blocked nothing, the next ones are refused too, and the right token works.
        assertLimited(await clientAdmin(server, '/api/admin/addresses?limit=1&offset=0', { headers: { authorization: 'Bearer another-wrong-guess' } }), 'a wrong guess');
        const list = await clientAdmin(server, '/api/admin/blocks');
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(list.json.results, []);
        const added = await clientAdmin(server, '/api/admin/blocks', { body: { kind: 'sender', value: 'after@spam.example' } });
        assert.equal(added.status, 200, added.text);
        assert.equal((await clientAdmin(server, '/api/admin/stats')).status, 200);
      },
    },
    WEBHOOK: {
      // PUT, GET and DELETE /api/webhook and GET /api/webhook/deliveries share one budget.
      setup: (server) => inbox(server, false),
      send: (server, { jwt }, i) =>
        [
          () => clientRequest(server.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: 'http://127.0.0.1:8081/hook' } }),
          () => clientRequest(server.httpUrl, '/api/webhook', { jwt }),
          () => clientRequest(server.httpUrl, '/api/webhook/deliveries', { jwt }),
          () => clientRequest(server.httpUrl, '/api/webhook', { method: 'DELETE', jwt }),
        ][i]!(),
      ok: (res, i) => {
        assert.equal(res.status, 200, res.text);
        if (i === 0) assert.match(res.json.secret, /^whsec_/);
        if (i === 1) assert.equal(res.json.url, 'http://127.0.0.1:8081/hook');
        if (i === 2) assert.deepEqual(res.json, { results: [] });
      },
      noEffect: async (server, { jwt }) => {
        // The refused DELETE removed nothing.
        assert.equal((await clientRequest(server.httpUrl, '/api/webhook', { jwt, ...setup() })).json.url, 'http://127.0.0.1:8081/hook');
      },
    },
    SANDBOX_TOKEN: {
      // Each checks a password (a slow hash): counted before it, the wrong guesses' lock-out apart.
      send: (server) => clientRequest(server.httpUrl, '/api/sandbox/token', { body: { name: BOXES.SANDBOX_TOKEN.name, password: BOXES.SANDBOX_TOKEN.password } }),
      ok: (res) => {
        assert.equal(res.status, 200, res.text);
        assert.match(res.json.jwt, /\./);
      },
    },
    SANDBOX: {
      // GET /api/sandbox and GET and PUT /api/sandbox/chaos share one budget.
      setup: async (server) => ({ jwt: (await clientRequest(server.httpUrl, '/api/sandbox/token', { body: { name: BOXES.SANDBOX.name, password: BOXES.SANDBOX.password }, ...setup() })).json.jwt }),
      send: (server, { jwt }, i) =>
        [
          () => clientRequest(server.httpUrl, '/api/sandbox', { jwt }),
          () => clientRequest(server.httpUrl, '/api/sandbox/chaos', { jwt }),
          () => clientRequest(server.httpUrl, '/api/sandbox/chaos', { method: 'PUT', jwt, body: {} }),
          () => clientRequest(server.httpUrl, '/api/sandbox/chaos', { method: 'PUT', jwt, body: { sender: { errorCode: 451, probability: 100 } } }),
        ][i]!(),
      ok: (res) => assert.equal(res.status, 200, res.text),
      noEffect: async (server, { jwt }) => {
        assert.deepEqual((await clientRequest(server.httpUrl, '/api/sandbox/chaos', { jwt, ...setup() })).json, {}, 'the refused PUT set nothing');
      },
    },
    MCP: {
      // Every message of a session counts: initialize, the initialized notification, a tool call.
      setup: (server) => inbox(server, false),
      send: async (server, ctx, i) => {
        const headers: Record<string, string> = { accept: 'application/json, text/event-stream', ...(ctx['session'] ? { 'mcp-session-id': ctx['session'] as string } : {}) };
        const messages = [
          { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rl', version: '1' } } },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'delete_inbox', arguments: {} } },
        ];
        const res = await clientRequest(server.httpUrl, '/mcp', { jwt: ctx['jwt'] as string, headers, body: messages[i] });
        ctx['session'] ??= res.headers.get('mcp-session-id') ?? undefined;
        return res;
      },
      ok: (res, i) => {
        assert.equal(res.status, i === 1 ? 202 : 200, res.text);
        if (i === 2) assert.match(res.text, /"name":"wait_for_mail"/);
      },
      noEffect: async (server, { jwt }) => {
        assert.equal((await clientSettings(server, jwt, setup())).status, 200, 'the refused delete_inbox deleted nothing');
      },
    },
  };

  it('covers every route of RATE_LIMIT_ROUTES', () => {
    assert.deepEqual(Object.keys(cases).sort(), Object.keys(RATE_LIMIT_ROUTES).sort());
  });

  const routes = Object.entries(cases) as [RateLimitRoute, Case][];
  let shared: TestServer;
  before(async () => {
    shared = await startTestServer({
      ...Object.fromEntries(routes.filter(([, c]) => !c.own).map(([route]) => [`RATE_LIMIT_${route}`, `${MAX}/60`])),
      // What the cases' routes need: sandboxes (MAILPIT, MAILHOG, SANDBOX_TOKEN, SANDBOX), the admin API, webhooks to loopback, MCP.
      SANDBOXES: Object.values(BOXES).map((b) => `${b.name}:${b.password}`).join(' '),
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      MCP: 'on',
    });
  });
  after(() => shared?.close());

  for (const [n, [route, c]] of routes.entries()) {
    it(`${route}: request ${MAX} of RATE_LIMIT_${route}=${MAX}/60 is served, request ${MAX + 1} is a plain-text 429 with Retry-After: 60 and does nothing`, async () => {
      CLIENT = `127.0.1.${n + 1}`;
      const server = c.own ? await startTestServer({ [`RATE_LIMIT_${route}`]: `${MAX}/60`, ...c.own }) : shared;
      try {
        const ctx = (await c.setup?.(server)) ?? {};
        for (let i = 0; i < MAX; i++) c.ok(await c.send(server, ctx, i), i, ctx);
        const refused = await c.send(server, ctx, MAX);
        assert.equal(c.mailtm ? assertLimitedMailtm(refused) : assertLimited(refused, `${route} request ${MAX + 1}`), 60, 'Retry-After is the window');
        assert.deepEqual(refused.setCookies, [], 'a refused request sets no cookie');
        await c.noEffect?.(server, ctx);
      } finally {
        if (c.own) await server.close();
      }
    });
  }
});

describe('rate limits: TRUST_PROXY', () => {
  // The two cases with a trusted proxy share a server: one's clients are the proxy's
  // X-Forwarded-For addresses and the proxy itself, the other's an untrusted peer (127.0.0.2).
  let trusting: Promise<TestServer> | undefined;
  const trustingServer = () => (trusting ??= startTestServer({ RATE_LIMIT_SETTINGS: '3/60', TRUST_PROXY: '127.0.0.1' }));
  after(async () => (await trusting)?.close());

  it('by default X-Forwarded-For does not change the key', async () => {
    const server = await limits60Server();
    const { jwt } = await addressFrom(server, '127.0.5.4');
    const from = (headers: Record<string, string>) => settings(server, jwt, { localAddress: '127.0.5.3', headers });
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) assertOk(await from({ 'x-forwarded-for': ip }), ip);
    assertLimited(await from({ 'x-forwarded-for': '9.9.9.9' }), 'spoofed 9.9.9.9');
    assertLimited(await from({ 'x-real-ip': '8.8.8.8', forwarded: 'for=8.8.8.8' }), 'other forwarding headers');
  });

  it('with TRUST_PROXY=127.0.0.1 each X-Forwarded-For client gets its own budget', async () => {
    const server = await trustingServer();
    const { jwt } = await createAddress(server);
    const via = (ip: string) => settings(server, jwt, { headers: { 'x-forwarded-for': ip } });
    for (let i = 1; i <= 3; i++) assertOk(await via('9.9.9.9'), `9.9.9.9 #${i}`);
    assertLimited(await via('9.9.9.9'), '9.9.9.9 #4');
    for (let i = 1; i <= 3; i++) assertOk(await via('8.8.8.8'), `8.8.8.8 #${i}`);
    assertLimited(await via('8.8.8.8'), '8.8.8.8 #4');
    // The proxy itself (no header) is a client of its own.
    assertOk(await settings(server, jwt), 'the proxy without X-Forwarded-For');
    // An IPv4-mapped form is the same client as the IPv4 address.
    assertLimited(await via('::ffff:9.9.9.9'), '::ffff:9.9.9.9');
    // IPv6 clients are keyed by their /64.
    for (let i = 1; i <= 3; i++) assertOk(await via(`2001:db8:1:2:aaaa::${i}`), `2001:db8:1:2:aaaa::${i}`);
    assertLimited(await via('2001:db8:1:2:bbbb::2'), 'same /64');
    assertOk(await via('2001:db8:1:3::1'), 'another /64');
  });

  it('an untrusted peer cannot use X-Forwarded-For even when a proxy is trusted', async () => {
    const server = await trustingServer();
    const { jwt } = await createAddress(server);
    const from2 = (ip: string) => settings(server, jwt, { localAddress: '127.0.0.2', headers: { 'x-forwarded-for': ip } });
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) assertOk(await from2(ip), ip);
    assertLimited(await from2('4.4.4.4'), '127.0.0.2 is not a trusted proxy');
  });
});

describe('rate limits: clientKey', () => {
  it('keys IPv6 by /64, IPv4-mapped as IPv4, IPv4 as is', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:db8:1:2:bbbb::2'));
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff'));
    assert.notEqual(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:db8:1:3::1'));
    assert.equal(clientKey('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(clientKey('1.2.3.4'), '1.2.3.4');
    assert.notEqual(clientKey('1.2.3.4'), clientKey('1.2.3.5'));
    assert.notEqual(clientKey('1.2.3.4'), clientKey('::ffff:1.2.3.5'));
  });
});

// Without Redis the cases below are registered as skipped, with the reason.
const redisSkip = skipUnless('redis');

describe('rate limits: shared through Redis', () => {

  // The servers key counters as ti:rl:<ROUTE>:<client key> (the default
  // REDIS_KEY_PREFIX), so each test uses its own random loopback source address:
  // the keys are unique to this run and nothing else in a shared Redis is touched.
  const randomLoopback = () => `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
  let redis: Redis;
  const used: string[] = [];
  const freshIp = async () => {
    const ip = randomLoopback();
    used.push(ip);
    const keys = await redis.keys(`ti:rl:*:${ip}`);
    if (keys.length) await redis.del(...keys);
    return ip;
  };

  before(async () => {
    if (redisSkip) return;
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });
  after(async () => {
    if (redisSkip) return;
    for (const ip of used) {
      const keys = await redis.keys(`ti:rl:*:${ip}`);
      if (keys.length) await redis.del(...keys);
    }
    await redis.quit();
  });

  async function twoNodes(env: Record<string, string>) {
    const a = await startTestServer({ REDIS_URL, ...env });
    let b: TestServer;
    try {
      b = await startTestServer({ REDIS_URL, ...env });
    } catch (err) {
      await a.close();
      throw err;
    }
    return { a, b, close: async () => Promise.all([a.close(), b.close()]) };
  }

  it('two nodes share one limit', { skip: redisSkip }, async () => {
    const ip = await freshIp();
    const nodes = await twoNodes({ RATE_LIMIT_SETTINGS: '4/60' });
    try {
      const { a, b } = nodes;
      assert.notEqual(a.dataDir, b.dataDir);
      const jwtA = (await createAddress(a)).jwt;
      const jwtB = (await createAddress(b)).jwt;
      const onA = () => settings(a, jwtA, { localAddress: ip });
      const onB = () => settings(b, jwtB, { localAddress: ip });
      assertOk(await onA(), 'A #1');
      assertOk(await onA(), 'A #2');
      assertOk(await onB(), 'B #1');
      assertOk(await onB(), 'B #2');
      assert.equal(assertLimited(await onA(), 'A #3'), 60);
      assert.equal(assertLimited(await onB(), 'B #3'), 60);
      // The counter lives in Redis under the documented prefix.
      assert.ok((await redis.keys(`ti:rl:SETTINGS:${ip}`)).length === 1, 'counter stored in Redis');
      // Another client is unaffected on both nodes.
      const other = await freshIp();
      assertOk(await settings(a, jwtA, { localAddress: other }), 'other IP on A');
      assertOk(await settings(b, jwtB, { localAddress: other }), 'other IP on B');
    } finally {
      await nodes.close();
    }
  });

  it('trip, hammering extends, quiet recovers — across nodes', { skip: redisSkip }, async () => {
    const ip = await freshIp();
    const nodes = await twoNodes({ RATE_LIMIT_SETTINGS: '2/3' });
    try {
      const { a, b } = nodes;
      const jwtA = (await createAddress(a)).jwt;
      const jwtB = (await createAddress(b)).jwt;
      const send = (i: number) => (i % 2 === 0 ? settings(a, jwtA, { localAddress: ip }) : settings(b, jwtB, { localAddress: ip }));
      assertOk(await send(0), 'A #1');
      assertOk(await send(1), 'B #1');
      assert.equal(assertLimited(await send(0), 'A #2'), 3);
      assertLimited(await send(1), 'B #2');
      const recovered = await hammerThenRecover(send, 3);
      assertOk(recovered, 'after a quiet Retry-After');
      // Both nodes serve the client again, within the fresh budget of 2.
      assertOk(await settings(b, jwtB, { localAddress: ip }), 'B after recovery');
      assertLimited(await settings(a, jwtA, { localAddress: ip }), 'fresh budget used up');
    } finally {
      await nodes.close();
    }
  });
});
