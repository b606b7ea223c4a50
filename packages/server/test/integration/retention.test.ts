// Retention end to end (docs/decisions.md "Retention"): MAIL_TTL, ADDRESS_TTL and
// the sweep that SWEEP_INTERVAL runs, through SMTP, the HTTP API and the rows of
// the database. The service runs on an injected clock (startServer's `now`), so an
// hour passes at once; the sweep runs on its real timer, every 200 ms.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { client, createAddress, message, sendMail, SmtpClient, tmp } from '../helpers/harness.js';
import { openEventStream } from '../helpers/event-stream.js';

const HOUR = 3_600_000;
const SWEEP_MS = 200;

interface ClockedServer extends RunningServer {
  /** Moves the service's clock. */
  advance(ms: number): void;
  /** Row counts, read from the database file by another connection. */
  rows(): { addresses: number; mails: number; bodies: number; attachments: number };
}

const running: { server: RunningServer; dir: string }[] = [];
after(async () => {
  for (const { server, dir } of running) {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function start(env: Record<string, string>): Promise<ClockedServer> {
  let t = Date.now();
  const dir = tmp('temp-inbox-retention-');
  const config = loadConfig({
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: '0',
    SMTP_HOSTNAME: 'mx.test',
    DATA_DIR: dir,
    RATE_LIMITS: 'off',
    // The authentication checks ask a closed local port, never the machine's resolvers (as helpers/harness.ts does).
    DNS_SERVERS: '127.0.0.1:1',
    ...env,
  });
  const server = await startServer(config, { logger: pino({ level: 'silent' }), now: () => t });
  running.push({ server, dir });
  return {
    ...server,
    advance(ms) {
      t += ms;
    },
    rows() {
      const db = new Database(join(dir, 'temp-inbox.sqlite'), { readonly: true });
      try {
        const n = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
        return { addresses: n('addresses'), mails: n('mails'), bodies: n('bodies'), attachments: n('body_attachments') };
      } finally {
        db.close();
      }
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true, for at most `ms`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

/**
 * Soft-deletes a new mail and waits until a sweep has purged it: a sweep that queried the
 * database after this was called. Two calls in a row prove a whole sweep ran after the first
 * began (the second one's mail was deleted after the first's sweep had finished its query).
 */
async function aSweepRan(server: ClockedServer, address: string, jwt: string, subject: string): Promise<void> {
  const api = client(server);
  await sendMail(server.smtpPort, { to: [address], message: message({ Subject: subject, 'Message-ID': `<${subject}@retention.test>` }, 'x') });
  const listed = (await api('/api/mails?limit=10&offset=0', { jwt })).json.results as { uuid: string; message_id: string }[];
  const uuid = listed.find((m) => m.message_id === `<${subject}@retention.test>`)!.uuid;
  const mails = server.rows().mails;
  assert.equal((await api(`/api/mails/${uuid}`, { method: 'DELETE', jwt })).status, 200);
  await eventually(`a sweep purges ${subject}`, () => server.rows().mails < mails);
}

const withFile = (subject: string) =>
  [
    `Subject: ${subject}`,
    `Message-ID: <${subject}@retention.test>`,
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    subject,
    '--b',
    'Content-Type: application/octet-stream',
    'Content-Disposition: attachment; filename="f.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(subject.repeat(20)).toString('base64'),
    '--b--',
    '',
  ].join('\r\n');

describe('MAIL_TTL and the sweep', () => {
  it('mail is purged by the sweep once it is older than MAIL_TTL (not at exactly MAIL_TTL), with its body and attachments; younger mail and the address stay', async () => {
    const server = await start({ MAIL_TTL: '1h', ADDRESS_TTL: '1d', SWEEP_INTERVAL: `${SWEEP_MS}ms` });
    const api = client(server);
    const { address, jwt } = await createAddress(server);
    const list = async () => (await api('/api/mails?limit=10&offset=0', { jwt })).json as { count: number; results: { uuid: string; message_id: string }[] };

    await sendMail(server.smtpPort, { to: [address], message: withFile('older') });
    server.advance(HOUR / 2);
    await sendMail(server.smtpPort, { to: [address], message: withFile('younger') });
    const older = (await list()).results.find((m) => m.message_id === '<older@retention.test>')!;
    assert.deepEqual(server.rows(), { addresses: 1, mails: 2, bodies: 2, attachments: 2 });

    // The older mail is exactly MAIL_TTL old: a sweep that began after the clock moved keeps it.
    server.advance(HOUR / 2);
    await aSweepRan(server, address, jwt, 'marker-1');
    await aSweepRan(server, address, jwt, 'marker-2');
    assert.deepEqual((await list()).results.map((m) => m.message_id).sort(), ['<older@retention.test>', '<younger@retention.test>']);

    // One millisecond later the next sweep takes it, and only it.
    server.advance(1);
    await eventually('the older mail is purged', async () => (await list()).count === 1);
    assert.deepEqual(
      (await list()).results.map((m) => m.message_id),
      ['<younger@retention.test>'],
    );
    assert.equal((await api(`/api/mail/${older.uuid}`, { jwt })).status, 404);
    assert.equal((await api(`/api/attachment/${older.uuid}/0`, { jwt })).status, 404);
    assert.deepEqual(server.rows(), { addresses: 1, mails: 1, bodies: 1, attachments: 1 });

    // The address (a day's TTL) still authenticates and receives.
    assert.equal((await api('/api/settings', { jwt })).status, 200);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'later' }, 'x') });
    assert.equal((await list()).count, 2);
  });

  it('a soft-deleted mail is purged by the next sweep, whatever its age', async () => {
    const server = await start({ MAIL_TTL: '1h', SWEEP_INTERVAL: `${SWEEP_MS}ms` });
    const api = client(server);
    const { address, jwt } = await createAddress(server);
    await sendMail(server.smtpPort, { to: [address], message: withFile('deleted') });
    const uuid = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    assert.equal((await api(`/api/mails/${uuid}`, { method: 'DELETE', jwt })).status, 200);
    await eventually('the deleted mail is purged', () => server.rows().mails === 0);
    assert.deepEqual(server.rows(), { addresses: 1, mails: 0, bodies: 0, attachments: 0 });
  });
});

describe('ADDRESS_TTL', () => {
  it('at exactly ADDRESS_TTL the address still works; one millisecond later its token gets 401 and RCPT TO gets 550 5.1.1, before any sweep', async () => {
    // The sweep waits an hour of real time: what is checked here is the TTL itself.
    const server = await start({ ADDRESS_TTL: '1h', MAIL_TTL: '7d', SWEEP_INTERVAL: '1h' });
    const api = client(server);
    const { address, jwt } = await createAddress(server, { name: 'short-lived' });
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'kept' }, 'x') });

    server.advance(HOUR);
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt })).json.count, 1);
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<s@example.org>', 250],
        [`RCPT TO:<${address}>`, 250],
        ['RSET', 250],
      ]);

      server.advance(1);
      for (const path of ['/api/mails?limit=10&offset=0', '/api/settings', '/api/mails/wait?timeout=0']) {
        const res = await api(path, { jwt });
        assert.equal(res.status, 401, path);
        assert.equal(res.text, 'This address no longer exists.', path);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, path);
      }
      const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
      stream.close();
      assert.equal(stream.status, 401);
      await smtp.script([['MAIL FROM:<s@example.org>', 250]]);
      assert.equal((await smtp.command(`RCPT TO:<${address}>`)).text, `550 5.1.1 No such mailbox <${address}> here\r\n`);
    } finally {
      await smtp.quit();
    }
    // Not swept yet: the row is still there, and so the name is still taken.
    assert.equal(server.rows().addresses, 1);
    assert.equal((await api('/api/new_address', { body: { name: 'short-lived' } })).status, 409);
  });

  it('the sweep removes an expired address with all its mail, bodies and attachments; the name is retired for ADDRESS_TOMBSTONE_TTL, then can be taken again, and the old token stays refused', async () => {
    const server = await start({ ADDRESS_TTL: '1h', MAIL_TTL: '7d', SWEEP_INTERVAL: `${SWEEP_MS}ms`, ADDRESS_TOMBSTONE_TTL: '1h' });
    const api = client(server);
    const old = await createAddress(server, { name: 'recycled' });
    const other = await createAddress(server);
    for (const subject of ['one', 'two']) await sendMail(server.smtpPort, { to: [old.address, other.address], message: withFile(subject) });
    server.advance(HOUR / 2);
    const younger = await createAddress(server);
    await sendMail(server.smtpPort, { to: [younger.address], message: withFile('three') });
    assert.deepEqual(server.rows(), { addresses: 3, mails: 5, bodies: 3, attachments: 3 });

    server.advance(HOUR / 2 + 1);
    await eventually('the two expired addresses are swept', () => server.rows().addresses === 1);
    // The expired addresses' mails went with them; the bodies they shared were freed.
    assert.deepEqual(server.rows(), { addresses: 1, mails: 1, bodies: 1, attachments: 1 });
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt: younger.jwt })).json.count, 1);

    // Its tombstone holds the name (docs/decisions.md "Deleted address") until ADDRESS_TOMBSTONE_TTL has passed.
    const retired = await api('/api/new_address', { body: { name: 'recycled' } });
    assert.equal(retired.status, 409);
    assert.match(retired.text, /^That address was used before and is retired/);
    server.advance(HOUR + 1);
    const reborn = await api('/api/new_address', { body: { name: 'recycled' } });
    assert.equal(reborn.status, 200);
    assert.equal(reborn.json.address, old.address);
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt: reborn.json.jwt })).json.count, 0, 'the new owner sees none of the old mail');
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt: old.jwt })).status, 401, 'the old token does not open the new address');
  });
});
