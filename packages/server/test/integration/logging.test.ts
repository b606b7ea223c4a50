// Structured logs (docs/decisions.md "Beyond the interface": structured logs with request ids;
// "Errors": 5xx are logged with a request id). The server logs through a real pino
// logger into memory; each line must carry the id the client saw in x-request-id.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { client, createAddress, startTestServer, until, type TestServer } from '../helpers/harness.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  [key: string]: unknown;
}

function capture(level = 'info') {
  const lines: Line[] = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  return { lines, logger };
}

type Lines = Line[];

/** Until the line of request `id` (and `msg`, when given) is written: lines are written once a response has finished, not before the client reads it. */
async function lineOf(lines: Lines, id: string | null, msg?: string): Promise<Line> {
  const match = (l: Line) => l.reqId === id && (msg === undefined || l.msg === msg);
  await until(`the log line of request ${id}${msg ? ` (${msg})` : ''}`, () => lines.some(match));
  return lines.find(match)!;
}

/**
 * A later request that is logged at info (a 401), until its line is written: lines are
 * written in completion order, so every line of an earlier request is written by then.
 */
async function barrier(server: TestServer, lines: Lines): Promise<void> {
  const res = await client(server)('/api/settings');
  assert.equal(res.status, 401);
  await lineOf(lines, res.headers.get('x-request-id'));
}

describe('logging: access lines', () => {
  const debug = capture('debug');
  const info = capture('info');
  let atDebug: TestServer;
  let atInfo: TestServer;
  before(async () => {
    atDebug = await startTestServer({}, undefined, debug.logger);
    atInfo = await startTestServer({}, undefined, info.logger);
  });
  after(async () => {
    await atDebug.close();
    await atInfo.close();
  });

  it('at debug, an answered request gives exactly one debug line with its id, method, url, ip, status and time', async () => {
    const { jwt } = await createAddress(atDebug);
    const res = await client(atDebug)('/api/mails?limit=5&offset=0', { jwt });
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id');
    await barrier(atDebug, debug.lines);
    const mine = debug.lines.filter((l) => l.reqId === id);
    assert.equal(mine.length, 1, JSON.stringify(mine));
    const line = mine[0]!;
    assert.equal(line.level, 20);
    assert.equal(line.msg, 'request');
    assert.equal(line['method'], 'GET');
    assert.equal(line['url'], '/api/mails?limit=5&offset=0');
    assert.equal(line['ip'], '127.0.0.1');
    assert.equal(line['status'], 200);
    assert.equal(typeof line['ms'], 'number');
    assert.equal(typeof line['pid'], 'number');
    assert.equal(typeof line['time'], 'number');
  });

  it('at the default level (info), polls leave no line and client errors one info line', async () => {
    const { jwt } = await createAddress(atInfo);
    const ok = await client(atInfo)('/api/mails?limit=5&offset=0', { jwt });
    assert.equal(ok.status, 200);
    const denied = await client(atInfo)('/api/settings');
    assert.equal(denied.status, 401);
    // The denied request's line comes after any the poll before it would have left.
    await lineOf(info.lines, denied.headers.get('x-request-id'));
    await barrier(atInfo, info.lines);
    assert.equal(info.lines.filter((l) => l.reqId === ok.headers.get('x-request-id')).length, 0);
    const mine = info.lines.filter((l) => l.reqId === denied.headers.get('x-request-id'));
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.equal(mine[0]!.level, 30);
    assert.equal(mine[0]!['status'], 401);
    assert.equal(mine[0]!['url'], '/api/settings');
  });

  it("the SDK's probe GET /api/challenge (404: no proof of work) is logged at debug only; another 404 at info", async () => {
    const probe = await client(atInfo)('/api/challenge');
    assert.equal(probe.status, 404);
    const other = await client(atInfo)('/api/no-such-route');
    assert.equal(other.status, 404);
    // Lines are written in completion order: once the second request's is there, the probe's would be too.
    await until('the 404 line of the other route', () => info.lines.some((l) => l.reqId === other.headers.get('x-request-id')));
    assert.deepEqual(info.lines.filter((l) => l.reqId === probe.headers.get('x-request-id')), [], 'no line at info for the probe');
    assert.equal(info.lines.find((l) => l.reqId === other.headers.get('x-request-id'))!.level, 30);

    const probed = await client(atDebug)('/api/challenge');
    await until('the probe line at debug', () => debug.lines.some((l) => l.reqId === probed.headers.get('x-request-id')));
    const line = debug.lines.find((l) => l.reqId === probed.headers.get('x-request-id'))!;
    assert.equal(line.level, 20);
    assert.equal(line.msg, 'request (an expected probe)');
    assert.equal(line['status'], 404);
  });

  it('a credential in the query string is redacted in the access line; other parameters are kept', async () => {
    const { jwt } = await createAddress(atInfo);
    const secrets = [jwt, 'hunter2-password-value', 'admin-token-in-a-url', 'raw%20session', 'cf-token-value'];
    const url =
      `/api/settings?token=${jwt}&limit=5&JWT=${secrets[1]}&Admin-Token=${secrets[2]}&password=${secrets[1]}` +
      `&session_id=${secrets[3]}&access_token=${secrets[2]}&cf_token=${secrets[4]}&%70assword=${secrets[1]}&q=plain`;
    const res = await client(atInfo)(url);
    assert.equal(res.status, 401);
    await barrier(atInfo, info.lines);
    const mine = info.lines.filter((l) => l.reqId === res.headers.get('x-request-id'));
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.equal(
      mine[0]!['url'],
      '/api/settings?token=[redacted]&limit=5&JWT=[redacted]&Admin-Token=[redacted]&password=[redacted]' +
        '&session_id=[redacted]&access_token=[redacted]&cf_token=[redacted]&%70assword=[redacted]&q=plain',
    );
    const all = JSON.stringify(info.lines);
    for (const s of secrets) assert.ok(!all.includes(s), `${s.slice(0, 12)}… is not in the log`);
  });
});

describe('logging: a server error', () => {
  it('is logged with the request id the client was given, in the error line and the access line', async () => {
    const { lines, logger } = capture();
    const server = await startTestServer({}, undefined, logger);
    try {
      const { jwt } = await createAddress(server);
      await server.store.close(); // every query now fails: an internal error, not the client's
      const res = await client(server)('/api/mails?limit=5&offset=0', { jwt });
      assert.equal(res.status, 500);
      const id = res.headers.get('x-request-id') ?? '';
      assert.match(res.text, new RegExp(`request id ${id}`));
      assert.doesNotMatch(res.text, /at .*\.(js|ts):\d+/, 'no stack trace reaches the client');
      const failed = await lineOf(lines, id, 'request failed');
      await until('the access line of the failed request', () => lines.some((l) => l.reqId === id && l.status === 500));
      const mine = lines.filter((l) => l.reqId === id);
      assert.equal(failed.level, 50);
      assert.ok((failed['err'] as { stack?: string } | undefined)?.stack, 'the error line keeps the stack for the operator');
      assert.ok(mine.some((l) => l.level >= 40 && l.status === 500), `an access line at warn or above: ${JSON.stringify(mine)}`);

      const health = await client(server)('/health_check');
      assert.equal(health.status, 503);
      assert.equal((await lineOf(lines, health.headers.get('x-request-id'), 'health check failed')).msg, 'health check failed');
    } finally {
      await server.close().catch(() => undefined);
    }
  });
});
