// `temp-inbox-server backup FILE` (the built command) while mail keeps arriving over
// SMTP, then a restore as docs/deploy.md "Backups" describes it: the copy becomes
// DATA_DIR's database of a fresh service, which serves every mail that got its 250
// before the backup began, to the tokens issued before it, attachments included.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createAddress, DOMAIN, request, SmtpClient, startTestServer, tmp } from '../helpers/harness.js';
import { MAIN } from '../helpers/process.js';
import { storeContract } from '../helpers/store-contract.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { backupSqlite } from '../../src/storage/sqlite/backup.js';

/** The system's sqlite3 (Debian's package), as an operator would open a backup with it; undefined when it is not installed. */
const systemSqlite = (() => {
  const r = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();
if (!systemSqlite && process.env['REQUIRE_SERVICES'] === '1') throw new Error('sqlite3 is required (REQUIRE_SERVICES=1) but not installed (apt-get install sqlite3).');

/** Runs SQL with the system's sqlite3 on `file`: its output, or its error as the assertion's message. */
function systemSql(file: string, sql: string): string {
  const r = spawnSync('sqlite3', ['-batch', file, sql], { encoding: 'utf8' });
  assert.equal(r.status, 0, `sqlite3 ${JSON.stringify(sql)}: ${r.stderr}`);
  assert.equal(r.stderr, '', `sqlite3 ${JSON.stringify(sql)}`);
  return r.stdout.trim();
}

/** Where the backup under load lives: its live data directory and the copy, until the file's cases end. */
const keptDir = tmp('temp-inbox-backup-kept-');
after(() => rmSync(keptDir, { recursive: true, force: true }));

function runBackup(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const withAttachment = (i: number) =>
  [
    `Subject: backup ${i}`,
    `Message-ID: <backup-${i}@test>`,
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    `mail ${i}`,
    '--b',
    `Content-Type: application/octet-stream; name="f${i}.bin"`,
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(`attachment ${i}`).toString('base64'),
    '--b--',
    '',
  ].join('\r\n');

interface UnderLoad {
  /** The live service's data directory (stopped), its secrets included. */
  live: string;
  /** The copy the command wrote. */
  file: string;
  jwt: string;
  result: { code: number | null; stdout: string; stderr: string };
  /** The mails acknowledged (250) before the backup began, and how many while it ran. */
  before: number[];
  sentDuring: number;
}

let underLoad: Promise<UnderLoad> | undefined;
/**
 * The command's backup of a service while mail arrives, taken once for this file by
 * whichever case asks first (the restore case checks it, the store contract restores copies
 * of it): no case depends on another having run before it.
 */
function backupUnderLoad(): Promise<UnderLoad> {
  return (underLoad ??= takeBackupUnderLoad());
}

async function takeBackupUnderLoad(): Promise<UnderLoad> {
  const live = join(keptDir, 'live');
  const file = join(keptDir, 'copy.sqlite');
  const server = await startTestServer({}, live);
  let sending = true;
  const acknowledged: { i: number; at: number }[] = [];
  try {
    const { address, jwt } = await createAddress(server, { name: 'backed-up' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    assert.equal((await smtp.command('EHLO backup.test')).code, 250);
    const sender = (async () => {
      for (let i = 0; sending; i++) {
        assert.equal((await smtp.command('MAIL FROM:<load@example.com>')).code, 250);
        assert.equal((await smtp.command(`RCPT TO:<${address}>`)).code, 250);
        assert.equal((await smtp.command('DATA')).code, 354);
        const r = await smtp.command(`${withAttachment(i)}\r\n.`);
        assert.equal(r.code, 250, r.text);
        acknowledged.push({ i, at: performance.now() });
      }
    })();
    while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 10));
    const began = performance.now();
    const result = await runBackup({ DATA_DIR: live, MAIL_DOMAINS: DOMAIN }, ['backup', file]);
    const sentDuring = acknowledged.filter((a) => a.at > began).length;
    sending = false;
    await sender;
    await smtp.quit();
    return { live, file, jwt, result, before: acknowledged.filter((a) => a.at < began).map((a) => a.i), sentDuring };
  } finally {
    sending = false;
    await server.close({ keepData: true });
  }
}

describe('temp-inbox-server backup', { timeout: 120_000 }, () => {
  it('copies the store while mail arrives; the copy restores into a service that serves everything acknowledged before it', async () => {
    const dir = tmp('temp-inbox-backup-');
    const restored = join(dir, 'restored');
    try {
      const { live, file, jwt, result, before, sentDuring } = await backupUnderLoad();
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^temp-inbox: backup of \d+ mails \(\d+ bytes\) written to /);
      assert.ok(sentDuring > 0, 'mail kept arriving while the backup ran');
      assert.equal(statSync(file).mode & 0o777, 0o600);

      // Restore: the copy as the database of a new data directory, with the same secrets.
      mkdirSync(restored, { mode: 0o700 });
      copyFileSync(file, join(restored, 'temp-inbox.sqlite'));
      copyFileSync(join(live, 'secrets.json'), join(restored, 'secrets.json'));
      const check = new Database(join(restored, 'temp-inbox.sqlite'), { readonly: true });
      assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
      check.close();
      const back = await startTestServer({}, restored);
      try {
        const all: { uuid: string; metadata: string }[] = [];
        for (let offset = 0; ; offset += 100) {
          const page = await request(back.httpUrl, `/api/mails?limit=100&offset=${offset}`, { jwt });
          assert.equal(page.status, 200, 'the token issued before the backup is honoured');
          all.push(...page.json.results);
          if (all.length >= page.json.count) break;
        }
        const subjects = new Set(all.map((m) => JSON.parse(m.metadata).subject as string));
        for (const i of before) assert.ok(subjects.has(`backup ${i}`), `mail ${i} got its 250 before the backup began and is in it`);
        const first = all.find((m) => JSON.parse(m.metadata).subject === 'backup 0')!;
        const mail = await request(back.httpUrl, `/api/mail/${first.uuid}`, { jwt });
        assert.equal(mail.status, 200);
        assert.match(mail.json.raw, /Message-ID: <backup-0@test>/);
        const attachment = await request(back.httpUrl, `/api/attachment/${first.uuid}/0`, { jwt });
        assert.equal(attachment.status, 200);
        assert.equal(attachment.text, 'attachment 0');
        // The copy carried its words as plain rows; the restored service indexes them again.
        const found = await request(back.httpUrl, '/api/mails/search?q=backup&limit=1&offset=0', { jwt });
        assert.equal(found.status, 200);
        assert.equal(found.json.count, all.length, 'every restored mail is found by its words');
      } finally {
        await back.close({ keepData: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`opens with the system's sqlite3 (${systemSqlite?.split(' ')[0] ?? 'not installed'}): mails read, searched and deleted (the live index needs 3.43); restored, it is searched as before`, { skip: !systemSqlite && 'the system sqlite3 is not installed' }, async () => {
    const dir = tmp('temp-inbox-backup-sqlite3-');
    let addressId = 0;
    try {
      const store = openSqliteStore(join(dir, 'temp-inbox.sqlite'));
      try {
        const a = await store.createAddress('inspect@example.com', Date.now());
        assert.ok(a);
        addressId = a.id;
        const mail = (i: number, text: string) => ({
          uuid: `inspect-${i}`,
          addressId: a.id,
          address: a.address,
          source: 'sender@example.org',
          messageId: `<inspect-${i}@test>`,
          metadata: JSON.stringify({ subject: `inspect ${i}`, attachments: [] }),
          trace: Buffer.alloc(0),
          body: { raw: Buffer.from(`Subject: inspect ${i}\r\n\r\n${text}\r\n`), attachments: [] },
          createdAt: Date.now(),
          searchText: text,
        });
        await store.insertMails([mail(1, 'marmalade on toast'), mail(2, 'nothing sweet'), mail(3, 'more marmalade')]);
        assert.equal((await store.searchMails(a.id, 'marmalade', 10, 0)).count, 2, 'indexed before the backup');
      } finally {
        await store.close();
      }
      const file = join(dir, 'copy.sqlite');
      // The command's own function (the case above runs the command).
      assert.equal(backupSqlite(join(dir, 'temp-inbox.sqlite'), file).mails, 3);
      assert.equal(systemSql(file, 'SELECT count(*) FROM mails'), '3');
      assert.equal(systemSql(file, 'PRAGMA integrity_check'), 'ok');
      // Searched as docs/deploy.md "Backups" shows: the words are plain rows of search_pending.
      const found = "SELECT group_concat(m.uuid, ' ') FROM search_pending p JOIN mails m ON m.id = p.mail_id WHERE ' ' || p.words || ' ' LIKE '% marmalade %'";
      assert.equal(systemSql(file, found), 'inspect-1 inspect-3');
      // A mail deleted with the system's tool takes its words with it.
      systemSql(file, "DELETE FROM mails WHERE uuid = 'inspect-1'");
      assert.equal(systemSql(file, found), 'inspect-3');
      assert.equal(systemSql(file, 'SELECT count(*) FROM mails'), '2');
      assert.equal(systemSql(file, 'PRAGMA integrity_check'), 'ok');
      // Restored, the copy is searched as before: its index is made again from those rows.
      const restored = openSqliteStore(file);
      try {
        const r = await restored.searchMails(addressId, 'marm', 10, 0);
        assert.deepEqual(r.results.map((m) => m.uuid), ['inspect-3']);
        assert.equal((await restored.searchMails(addressId, 'sweet', 10, 0)).count, 1);
      } finally {
        await restored.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what it cannot do, in one sentence: no file, an existing file, no database, PostgreSQL', async () => {
    const dir = tmp('temp-inbox-backup-bad-');
    try {
      const usage = await runBackup({ DATA_DIR: dir }, ['backup']);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /^temp-inbox: backup takes exactly one argument, the file to write\.\n/);
      const unknown = await runBackup({ DATA_DIR: dir }, ['bakup', 'x']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /^temp-inbox: unknown command "bakup"\./);

      const none = await runBackup({ DATA_DIR: join(dir, 'empty') }, ['backup', join(dir, 'x.sqlite')]);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /^temp-inbox: backup failed: There is no database at .*; check DATA_DIR\.\n$/);
      assert.equal(existsSync(join(dir, 'x.sqlite')), false, 'nothing written');

      const taken = join(dir, 'taken.sqlite');
      writeFileSync(taken, 'keep me');
      const db = new Database(join(dir, 'temp-inbox.sqlite'));
      db.exec('CREATE TABLE mails (id INTEGER PRIMARY KEY)');
      db.close();
      const exists = await runBackup({ DATA_DIR: dir }, ['backup', taken]);
      assert.equal(exists.code, 1);
      assert.match(exists.stderr, /already exists; a backup never overwrites a file\.\n$/);

      const pgUrl = await runBackup({ DATA_DIR: dir, DATABASE_URL: 'postgres://127.0.0.1:5432/test' }, ['backup', join(dir, 'y.sqlite')]);
      assert.equal(pgUrl.code, 1);
      assert.match(pgUrl.stderr, /DATABASE_URL is set: back up PostgreSQL with pg_dump/);
      for (const r of [usage, unknown, none, exists, pgUrl]) assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');

      const help = await runBackup({}, ['--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /temp-inbox-server backup FILE/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The copy taken under load, restored (each case on a copy of its own), is a store that
// passes the whole store contract, with the mail it holds.
storeContract('sqlite restored from a backup taken under load', async () => {
  const { file, result } = await backupUnderLoad();
  assert.equal(result.code, 0, result.stderr);
  const dir = tmp('temp-inbox-backup-contract-');
  copyFileSync(file, join(dir, 'temp-inbox.sqlite'));
  const store = openSqliteStore(join(dir, 'temp-inbox.sqlite'));
  assert.ok((await store.storageUsage()).mails >= 40, 'the restored store holds the mail acknowledged before the backup');
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
