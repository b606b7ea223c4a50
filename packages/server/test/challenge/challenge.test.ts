// The bot challenge on POST /api/new_address (docs/api.md "Authentication"; docs/decisions.md
// "Bot challenge") against a fake siteverify server on 127.0.0.1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAddress, request, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';

interface VerifierCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  fields: Record<string, string>;
}

type Mode = 'normal' | 'error500' | 'garbage' | 'hang';

/** A fake Turnstile siteverify endpoint that records what it receives. */
async function startVerifier() {
  const calls: VerifierCall[] = [];
  let mode: Mode = 'normal';
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, fields });
      if (mode === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>captive portal</html>');
        return;
      }
      if (mode === 'error500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":true}');
        return;
      }
      const ok = fields['response'] === 'good';
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    calls,
    url: `http://127.0.0.1:${port}/siteverify`,
    setMode(m: Mode) {
      mode = m;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const newAddress = (server: TestServer, body: unknown) => request(server.httpUrl, '/api/new_address', { method: 'POST', body });

function assertPlainTextError(res: HttpResult, status: number) {
  assert.equal(res.status, status, `${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(res.json, undefined, `plain text, not JSON: ${res.text}`);
  assert.ok(res.text.length > 0, 'a human sentence');
  assert.deepEqual(res.setCookies, [], 'no cookies on a refused creation');
}

describe('bot challenge: enabled', () => {
  let verifier: Awaited<ReturnType<typeof startVerifier>>;
  let server: TestServer;
  before(async () => {
    verifier = await startVerifier();
    server = await startTestServer({ TURNSTILE_SECRET_KEY: 's3cret-value', TURNSTILE_VERIFY_URL: verifier.url });
  });
  after(async () => {
    await server?.close();
    await verifier?.close();
  });

  it('a missing cf_token is 400 plain text and the verifier is not asked', async () => {
    const before = verifier.calls.length;
    for (const body of [{}, { name: 'nochallenge' }, { cf_token: '' }]) {
      const res = await newAddress(server, body);
      assertPlainTextError(res, 400);
      assert.doesNotMatch(res.text, /s3cret/);
    }
    // No body at all is treated as {}.
    const none = await request(server.httpUrl, '/api/new_address', { method: 'POST' });
    assertPlainTextError(none, 400);
    assert.equal(verifier.calls.length, before);
    // The requested name was not taken by the refused attempt.
    const taken = await newAddress(server, { name: 'nochallenge', cf_token: 'good' });
    assert.equal(taken.status, 200, taken.text);
  });

  it('a rejected token is 400 plain text and creates nothing', async () => {
    const before = verifier.calls.length;
    const res = await newAddress(server, { cf_token: 'bad', name: 'rejected' });
    assertPlainTextError(res, 400);
    assert.doesNotMatch(res.text, /s3cret/);
    assert.equal(verifier.calls.length, before + 1);
    assert.equal(verifier.calls.at(-1)!.fields['response'], 'bad');
    const ok = await newAddress(server, { cf_token: 'good', name: 'rejected' });
    assert.equal(ok.status, 200, 'the name is still free');
  });

  it('an accepted token creates the address; the verifier got secret, response and remoteip as a form', async () => {
    const before = verifier.calls.length;
    const res = await newAddress(server, { cf_token: 'good' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.address, /^[a-z0-9]{10}@temp-inbox\.localhost$/);
    assert.equal(typeof res.json.jwt, 'string');
    assert.ok(res.setCookies.some((c) => c.startsWith('jwt=')));
    assert.ok(res.setCookies.some((c) => c.startsWith('session_id=')));
    const settings = await request(server.httpUrl, '/api/settings', { jwt: res.json.jwt });
    assert.deepEqual(settings.json, { address: res.json.address });

    assert.equal(verifier.calls.length, before + 1);
    const call = verifier.calls.at(-1)!;
    assert.equal(call.method, 'POST');
    assert.equal(call.path, '/siteverify');
    assert.match(String(call.headers['content-type']), /^application\/x-www-form-urlencoded/);
    assert.deepEqual(call.fields, { secret: 's3cret-value', response: 'good', remoteip: '127.0.0.1' });
  });

  it('the mail API needs only the JWT, not the challenge', async () => {
    const { jwt } = (await newAddress(server, { cf_token: 'good' })).json;
    const before = verifier.calls.length;
    const mails = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt });
    assert.equal(mails.status, 200);
    assert.equal(verifier.calls.length, before);
  });

  it('a verifier answering 500 is 503 (fail closed)', async () => {
    verifier.setMode('error500');
    try {
      const res = await newAddress(server, { cf_token: 'good', name: 'verifier-down' });
      assertPlainTextError(res, 503);
      assert.doesNotMatch(res.text, /s3cret|500|127\.0\.0\.1/);
    } finally {
      verifier.setMode('normal');
    }
    const ok = await newAddress(server, { cf_token: 'good', name: 'verifier-down' });
    assert.equal(ok.status, 200, 'nothing was created by the failed attempt');
  });

  it('a verifier answering 200 with a non-JSON body is 503', async () => {
    verifier.setMode('garbage');
    try {
      assertPlainTextError(await newAddress(server, { cf_token: 'good' }), 503);
    } finally {
      verifier.setMode('normal');
    }
  });

  it('a verifier that never answers is 503 after the 5 s timeout', async () => {
    verifier.setMode('hang');
    try {
      const started = Date.now();
      const res = await newAddress(server, { cf_token: 'good' });
      const took = Date.now() - started;
      assertPlainTextError(res, 503);
      assert.ok(took >= 4500 && took < 9000, `timed out after about 5 s (took ${took} ms)`);
    } finally {
      verifier.setMode('normal');
    }
  });
});

describe('bot challenge: verifier unreachable', () => {
  it('a closed port is 503', async () => {
    const port = await closedPort();
    const server = await startTestServer({ TURNSTILE_SECRET_KEY: 's3cret-value', TURNSTILE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify` });
    try {
      const res = await newAddress(server, { cf_token: 'good' });
      assertPlainTextError(res, 503);
      // A missing token is still the client's fault: 400, not 503.
      assertPlainTextError(await newAddress(server, {}), 400);
    } finally {
      await server.close();
    }
  });
});

describe('bot challenge: disabled', () => {
  it('without TURNSTILE_SECRET_KEY, {} works and the verifier is never called', async () => {
    const verifier = await startVerifier();
    const server = await startTestServer({ TURNSTILE_VERIFY_URL: verifier.url });
    try {
      const a = await createAddress(server, {});
      assert.match(a.address, /@temp-inbox\.localhost$/);
      const b = await newAddress(server, { cf_token: 'bad' });
      assert.equal(b.status, 200, 'a stray token is ignored when the challenge is off');
      const c = await request(server.httpUrl, '/api/new_address', { method: 'POST' });
      assert.equal(c.status, 200, 'no body at all');
      assert.equal(verifier.calls.length, 0);
    } finally {
      await server.close();
      await verifier.close();
    }
  });

  it('an empty TURNSTILE_SECRET_KEY also disables the challenge', async () => {
    const verifier = await startVerifier();
    const server = await startTestServer({ TURNSTILE_SECRET_KEY: '', TURNSTILE_VERIFY_URL: verifier.url });
    try {
      assert.equal((await newAddress(server, {})).status, 200);
      assert.equal(verifier.calls.length, 0);
    } finally {
      await server.close();
      await verifier.close();
    }
  });
});
