// Graceful shutdown with work in flight (server.ts stop(): "Stops accepting,
// finishes what is in flight, and closes every connection"). The SMTP receiver is
// closed first: it stops listening at once, lets a session in the middle of DATA
// finish within smtp-server's closeTimeout (5 s), and then ends what is left with
// 421; only then are HTTP (open waits answer 204), the parser and the store closed.
// What was stored is read from the database file after stop() has resolved.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { client, createAddress, message, METRICS_TOKEN, openData, request, SmtpClient, startTestServer, until, untilPushOpen, type TestServer } from '../helpers/harness.js';
import { listening, spawnService } from '../helpers/source-process.js';

/** smtp-server's closeTimeout as smtp-receiver.ts sets it. */
const CLOSE_TIMEOUT_MS = 5_000;

const dirs: string[] = [];
const unstopped: TestServer[] = [];
after(async () => {
  for (const s of unstopped) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(): Promise<TestServer> {
  const server = await startTestServer();
  unstopped.push(server);
  dirs.push(server.dataDir);
  return server;
}

/** Stops the server, keeping its data directory, and measures how long stop() took. */
function stop(server: TestServer): { done: Promise<number> } {
  unstopped.splice(unstopped.indexOf(server), 1);
  const started = Date.now();
  return { done: server.close({ keepData: true }).then(() => Date.now() - started) };
}

/** Message-IDs stored in the (stopped) server's database. */
function storedIds(server: TestServer): string[] {
  const db = new Database(join(server.dataDir, 'temp-inbox.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT message_id FROM mails ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

const refusedConnection = (port: number) =>
  assert.rejects(SmtpClient.connect(port), (err: NodeJS.ErrnoException) => {
    assert.equal(err.code, 'ECONNREFUSED');
    return true;
  });

describe('graceful shutdown', () => {
  it('a delivery in mid-DATA when stop() is called completes and is stored; a wait on its address answers 200 with it; new SMTP connections are refused', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server);
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=30', { jwt });
    const smtp = await openData(server.smtpPort, address);
    const raw = message({ Subject: 'in flight', 'Message-ID': '<in-flight@shutdown.test>' }, 'first half\nsecond half');
    const cut = raw.indexOf('second half');
    smtp.write(raw.slice(0, cut));

    // stop() closes the SMTP listener before its first await (the receiver is the first thing
    // it closes): from here on a connection is refused, with no time to wait out.
    const stopping = stop(server);
    await refusedConnection(server.smtpPort);
    // HTTP is still served while SMTP drains.
    assert.equal((await client(server)('/health_check')).status, 200);

    smtp.write(`${raw.slice(cut)}.\r\n`);
    assert.equal((await smtp.reply()).text, '250 2.6.0 Ok: stored 1 copy\r\n');
    const woke = await waiting;
    assert.equal(woke.status, 200);
    assert.deepEqual(
      woke.json.results.map((m: { message_id: string }) => m.message_id),
      ['<in-flight@shutdown.test>'],
    );
    // No new transaction on a closing server.
    assert.equal((await smtp.command('MAIL FROM:<s@example.org>')).text, '421 4.4.2 Server shutting down\r\n');
    await assert.rejects(smtp.reply(2_000), /closed/, 'the connection is closed after the 421');

    const took = await stopping.done;
    assert.ok(took < CLOSE_TIMEOUT_MS, `stop() took ${took} ms though no session was left`);
    assert.equal(server.http.server.listening, false);
    assert.deepEqual(storedIds(server), ['<in-flight@shutdown.test>']);
  });

  it('a session stalled in mid-DATA is ended with 421 4.4.2 after the 5 s close time-out and its message is not stored; open waits then answer 204; stop() resolves', async () => {
    const server = await start();
    const { address } = await createAddress(server);
    const other = await createAddress(server);
    const waiting = request(server.httpUrl, '/api/mails/wait?timeout=60', { jwt: other.jwt });
    const stalled = await openData(server.smtpPort, address);
    stalled.write('Message-ID: <stalled@shutdown.test>\r\nSubject: never finished\r\n\r\nhalf a body\r\n');
    // In DATA since its 354 (openData): the half message is mid-DATA whenever its bytes arrive.

    const stopping = stop(server);
    const ended = await stalled.reply(CLOSE_TIMEOUT_MS + 3_000);
    assert.equal(ended.text, '421 4.4.2 Server shutting down\r\n');
    await assert.rejects(stalled.reply(2_000), /closed/);

    const wait = await waiting;
    assert.equal(wait.status, 204);
    assert.equal(wait.text, '');
    const took = await stopping.done;
    assert.ok(took >= CLOSE_TIMEOUT_MS - 100 && took < CLOSE_TIMEOUT_MS + 2_000, `stop() took ${took} ms`);
    assert.deepEqual(storedIds(server), []);
  });

  it('an idle session gets 421 4.4.2 at its next command and is closed; stop() resolves as soon as it has gone', async () => {
    const server = await start();
    const idle = await SmtpClient.connect(server.smtpPort);
    await idle.script([['EHLO client.test', 250]]);
    // The receiver is closing as soon as stop() returns (its close is called before any await).
    const stopping = stop(server);
    assert.equal((await idle.command('NOOP')).text, '421 4.4.2 Server shutting down\r\n');
    await assert.rejects(idle.reply(2_000), /closed/);
    const took = await stopping.done;
    assert.ok(took < 2_000, `stop() took ${took} ms`);
  });
});

describe('the command on SIGTERM', { timeout: 120_000 }, () => {
  it('logs the start, then at SIGTERM what it is doing and, once drained, what it closed and how long it took; exit 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'temp-inbox-sigterm-'));
    dirs.push(dataDir);
    const service = spawnService({ DATA_DIR: dataDir, METRICS_TOKEN });
    try {
      const { httpUrl, smtpPort } = await listening(service);
      const httpPort = new URL(httpUrl).port;
      assert.match(service.stdout(), new RegExp(`^temp-inbox: HTTP on ${httpUrl}, SMTP on port ${smtpPort}, domains \\S+ \\(listening on 127\\.0\\.0\\.1:${httpPort} and 127\\.0\\.0\\.1:${smtpPort}, storage sqlite\\)\\n$`));

      // One SMTP session and one HTTP request (a wait) open when the signal comes.
      const { jwt } = await createAddress({ httpUrl });
      const waiting = request(httpUrl, '/api/mails/wait?timeout=60', { jwt });
      await untilPushOpen({ httpUrl }, { wait: 1 });
      const smtp = await SmtpClient.connect(smtpPort);
      await smtp.script([['EHLO client.test', 250]]);

      service.child.kill('SIGTERM');
      await until('the stopping line', () => service.stdout().includes('SIGTERM received'), 30_000);
      assert.equal((await smtp.command('NOOP')).text, '421 4.4.2 Server shutting down\r\n');
      assert.equal((await waiting).status, 204);
      assert.equal(await service.exited, 0);

      const lines = service.stdout().trimEnd().split('\n').slice(1);
      assert.equal(lines.length, 2, service.stdout());
      assert.equal(lines[0], 'temp-inbox: SIGTERM received: stopping (SMTP sessions get up to 5 s to finish, then HTTP and storage close)');
      assert.match(lines[1]!, /^temp-inbox: stopped in \d+ ms: closed SMTP \(1 session ended\), HTTP \(1 request finished\), storage \(sqlite\)$/);
      assert.equal(service.stderr(), '');
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  });
});
