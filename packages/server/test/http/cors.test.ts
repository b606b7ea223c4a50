// Cross-origin access (CORS_ORIGINS; docs/decisions.md "CORS"): off by default (no
// CORS header at all, preflights 404); a list of origins gets preflights answered,
// credentials and Retry-After exposed, every other origin nothing; `*` any origin,
// never with credentials. Real HTTP against the whole service.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { createAddress, request, serversStoppedAfter, type HttpResult } from '../helpers/harness.js';
import { openEventStream } from '../helpers/event-stream.js';

const ALLOWED = 'https://app.example';
const preflight = (base: string, origin: string, path = '/api/mails?limit=1&offset=0', method = 'GET') =>
  request(base, path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization' } });

/** Every access-control-* header of a response. */
function corsHeaders(res: HttpResult | { headers: Headers }): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

const list = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

describe('CORS', () => {
  const start = serversStoppedAfter();
  const streams: { close(): void }[] = [];
  after(() => streams.forEach((s) => s.close()));

  it('is off by default: no CORS header on any answer, and a preflight is a 404', async () => {
    const server = await start();
    const { jwt } = await createAddress(server);
    const pre = await preflight(server.httpUrl, ALLOWED);
    assert.equal(pre.status, 404);
    assert.deepEqual(corsHeaders(pre), {});
    const get = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt, headers: { origin: ALLOWED } });
    assert.equal(get.status, 200);
    assert.deepEqual(corsHeaders(get), {});
    assert.equal(get.headers.get('vary'), null);
  });

  describe('CORS_ORIGINS=<list>', () => {
    const env = { CORS_ORIGINS: `${ALLOWED}, http://localhost:3000`, RATE_LIMIT_SETTINGS: '2/60' };

    it('answers a preflight from a listed origin: that origin, credentials, methods, headers, max-age, Vary: Origin', async () => {
      const server = await start(env);
      for (const origin of [ALLOWED, 'http://localhost:3000']) {
        const pre = await preflight(server.httpUrl, origin, '/api/mails/abc', 'DELETE');
        assert.equal(pre.status, 204, origin);
        assert.equal(pre.text, '');
        assert.equal(pre.headers.get('access-control-allow-origin'), origin);
        assert.equal(pre.headers.get('access-control-allow-credentials'), 'true');
        assert.deepEqual(list(pre.headers.get('access-control-allow-methods')), ['get', 'head', 'post', 'patch', 'put', 'delete']);
        assert.deepEqual(list(pre.headers.get('access-control-allow-headers')), ['authorization', 'content-type', 'last-event-id']);
        assert.equal(pre.headers.get('access-control-max-age'), '600');
        assert.ok(list(pre.headers.get('vary')).includes('origin'));
      }
    });

    it('grants a listed origin its answers, 429s and event streams, with Retry-After exposed', async () => {
      const server = await start(env);
      const { jwt } = await createAddress(server);
      const headers = { origin: ALLOWED };
      for (const expected of [200, 200, 429]) {
        const res = await request(server.httpUrl, '/api/settings', { jwt, headers });
        assert.equal(res.status, expected);
        assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED, `${expected}`);
        assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
        assert.deepEqual(list(res.headers.get('access-control-expose-headers')), ['retry-after', 'x-request-id', 'content-disposition']);
        assert.ok(list(res.headers.get('vary')).includes('origin'));
        if (expected === 429) assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
      }
      const stream = await openEventStream(server.httpUrl, '/api/events', { ...headers, cookie: `jwt=${jwt}` });
      streams.push(stream);
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['access-control-allow-origin'], ALLOWED);
      assert.equal(stream.headers['access-control-allow-credentials'], 'true');
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    });

    it('gives any other origin nothing: no CORS header, its preflight a 404', async () => {
      const server = await start(env);
      const { jwt } = await createAddress(server);
      for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'http://app.example', 'null']) {
        const pre = await preflight(server.httpUrl, origin);
        assert.equal(pre.status, 404, origin);
        assert.deepEqual(corsHeaders(pre), {}, origin);
        const get = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt, headers: { origin } });
        assert.equal(get.status, 200);
        assert.deepEqual(corsHeaders(get), {}, origin);
      }
      const stream = await openEventStream(server.httpUrl, '/api/events', { origin: 'https://evil.example', authorization: `Bearer ${jwt}` });
      streams.push(stream);
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['access-control-allow-origin'], undefined);
      // A request without Origin (not a browser's cross-origin request) is answered as ever.
      assert.deepEqual(corsHeaders(await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })), {});
    });
  });

  it('CORS_ORIGINS=* grants any origin, never with credentials', async () => {
    const server = await start({ CORS_ORIGINS: '*' });
    const { jwt } = await createAddress(server);
    const pre = await preflight(server.httpUrl, 'https://anyone.example');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.equal(pre.headers.get('access-control-allow-credentials'), null);
    assert.deepEqual(list(pre.headers.get('access-control-allow-headers')), ['authorization', 'content-type', 'last-event-id']);
    const get = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt, headers: { origin: 'https://other.example' } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), '*');
    assert.equal(get.headers.get('access-control-allow-credentials'), null);
    assert.ok(list(get.headers.get('access-control-expose-headers')).includes('retry-after'));
  });

  it('CORS_ORIGINS accepts origins as browsers send them and refuses anything else at start-up', () => {
    assert.equal(loadConfig({}).http.corsOrigins, undefined);
    assert.equal(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins, '*');
    assert.deepEqual(loadConfig({ CORS_ORIGINS: 'HTTPS://App.Example:443/, http://127.0.0.1:8081,https://app.example' }).http.corsOrigins, ['https://app.example', 'http://127.0.0.1:8081']);
    for (const bad of ['*,https://app.example', 'https://app.example/path', 'app.example', 'ftp://app.example', 'https://user@app.example', 'https://app.example?x=1', ',']) {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: bad }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith('CORS_ORIGINS is invalid: expected'),
        bad,
      );
    }
  });
});
