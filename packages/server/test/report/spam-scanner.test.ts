// The report's spam score from real scanners (report/spam-scanner.ts): Debian's rspamd
// (POST /checkv2) and SpamAssassin's spamd (REPORT SPAMC/1.5), started here on free ports
// (again on another when a port was taken meanwhile).
// A spammy message and a clean one, a scanner that is down, one that never answers, and
// a message past the size cap: the section is scored, or `unavailable` with why, never an
// error.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { parseScanner, scanMessage, spamdRules } from '../../src/report/spam-scanner.js';
import { freePort, scannerMissing, startRspamd, startSpamd, type RunningScanner } from '../helpers/spam-scanners.js';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'));
const SPAMMY = crlf(['From: winner@lottery.example', 'To: you@example.org', 'Subject: Buy viagra now!!! FREE MONEY', 'Message-ID: <1@x>', '', 'FREE MONEY!!! Click here to claim your viagra and cialis prize. 100% free, act now, limited time, no credit check.', '']);
const CLEAN = crlf([
  'From: Alice Example <alice@example.org>',
  'To: Bob Example <bob@example.org>',
  'Subject: Minutes of Tuesday',
  'Date: Tue, 01 Dec 2026 10:00:00 +0000',
  'Message-ID: <minutes-2026-12-01@example.org>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hi Bob, the minutes of Tuesday are attached to the wiki page. See you next week.',
  '',
]);
const OPTS = { timeoutMs: 20_000, maxBytes: 1024 * 1024 };

describe('SPAM_SCANNER values', () => {
  it('takes rspamd:// and spamd:// with default ports, refuses anything else with the form to use', () => {
    assert.deepEqual(parseScanner('rspamd://scanner:11333'), { kind: 'rspamd', host: 'scanner', port: 11333 });
    assert.deepEqual(parseScanner('rspamd://scanner'), { kind: 'rspamd', host: 'scanner', port: 11333 });
    assert.deepEqual(parseScanner('spamd://127.0.0.1'), { kind: 'spamd', host: '127.0.0.1', port: 783 });
    assert.deepEqual(parseScanner('spamd://[::1]:7830'), { kind: 'spamd', host: '::1', port: 7830 });
    for (const bad of ['http://scanner:11333', 'rspamd://', 'scanner:783', 'spamd://h:783/path', 'rspamd://u:p@h']) {
      assert.throws(() => parseScanner(bad), { message: 'SPAM_SCANNER must be rspamd://host:port or spamd://host:port.' }, bad);
    }
  });
  it('reads the rules of a spamd report, continuation lines included', () => {
    const report = [
      'Content analysis details:   (5.1 points, 5.0 required)',
      '',
      ' pts rule name              description',
      '---- ---------------------- --------------------------------------------------',
      ' 2.7 MISSING_DATE           Missing Date: header',
      '-0.0 NO_RECEIVED            Informational: message has no Received headers',
      ' 1.8 DRUGS_ERECTILE         Refers to an erectile drug',
      '                            and more words',
      '',
    ].join('\r\n');
    assert.deepEqual(spamdRules(report), [
      { name: 'MISSING_DATE', score: 2.7, description: 'Missing Date: header' },
      { name: 'NO_RECEIVED', score: -0, description: 'Informational: message has no Received headers' },
      { name: 'DRUGS_ERECTILE', score: 1.8, description: 'Refers to an erectile drug and more words' },
    ]);
  });
});

describe('no scanner, one that is down, one that never answers, a mail past the cap', () => {
  let silent: Server;
  let silentPort: number;
  const held: Socket[] = [];
  before(async () => {
    silent = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    silentPort = (silent.address() as { port: number }).port;
  });
  after(async () => {
    for (const s of held) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  it('without SPAM_SCANNER the section is unavailable and says so', async () => {
    assert.deepEqual(await scanMessage(null, CLEAN, OPTS), { verdict: 'unavailable', reason: 'No spam scanner is configured (SPAM_SCANNER).', findings: [], scanner: null, score: null, threshold: null, rules: [] });
  });
  for (const kind of ['rspamd', 'spamd'] as const) {
    it(`${kind} down (connection refused): unavailable, naming the address`, async () => {
      const port = await freePort();
      const s = await scanMessage({ kind, host: '127.0.0.1', port }, CLEAN, OPTS);
      assert.equal(s.verdict, 'unavailable');
      assert.equal(s.reason, `${kind} at 127.0.0.1:${port} could not be reached (ECONNREFUSED).`);
    });
    it(`${kind} that never answers: unavailable after the time-out, not later`, async () => {
      const t = performance.now();
      const s = await scanMessage({ kind, host: '127.0.0.1', port: silentPort }, CLEAN, { ...OPTS, timeoutMs: 300 });
      const ms = performance.now() - t;
      assert.equal(s.reason, `${kind} did not answer within 0.3 s.`);
      assert.ok(ms >= 290 && ms < 5000, `${ms} ms`);
    });
    it(`${kind}: a mail past SPAM_SCANNER_MAX_BYTES is not sent`, async () => {
      const s = await scanMessage({ kind, host: '127.0.0.1', port: silentPort }, CLEAN, { ...OPTS, maxBytes: 100 });
      assert.equal(s.reason, 'The mail is larger than SPAM_SCANNER_MAX_BYTES (100 bytes) and was not scanned.');
    });
  }
});

for (const kind of ['spamd', 'rspamd'] as const) {
  const skip = scannerMissing(kind);
  describe(`a real ${kind}`, { skip, timeout: 900_000 }, () => {
    let scanner: RunningScanner;
    before(async () => {
      scanner = kind === 'spamd' ? await startSpamd() : await startRspamd();
    });
    after(() => scanner?.close());

    it('scores a spammy mail with the rules that fired, highest first', async () => {
      const s = await scanMessage(parseScanner(scanner.url), SPAMMY, OPTS);
      assert.equal(s.scanner, kind);
      assert.notEqual(s.verdict, 'unavailable', s.reason);
      assert.equal(typeof s.score, 'number');
      assert.equal(typeof s.threshold, 'number');
      assert.ok(s.rules.length > 0);
      for (let i = 1; i < s.rules.length; i++) assert.ok(s.rules[i - 1]!.score >= s.rules[i]!.score);
      // Both scanners see the missing Date: header of this mail.
      assert.ok(s.rules.some((r) => r.name === 'MISSING_DATE'), JSON.stringify(s.rules));
      assert.equal(s.findings.length, 1);
      assert.equal(s.findings[0]!.rule, 'spam-score');
    });
    it('started on a port another process holds, it starts again on a free one (and is not fooled by what answers there)', async () => {
      // A squatter that accepts and answers anything: a check of "the port accepts" would take it for the scanner.
      const squatted: Socket[] = [];
      const squatter = createServer((c) => {
        squatted.push(c);
        c.end('HTTP/1.0 200 OK\r\n\r\nnot a scanner\r\n');
      });
      await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
      const taken = (squatter.address() as { port: number }).port;
      const moved = kind === 'spamd' ? await startSpamd({ firstPort: taken }) : await startRspamd({ firstPort: taken });
      try {
        assert.notEqual(moved.port, taken);
        const s = await scanMessage(parseScanner(moved.url), SPAMMY, OPTS);
        assert.equal(s.scanner, kind);
        assert.notEqual(s.verdict, 'unavailable', s.reason);
      } finally {
        await moved.close();
        for (const c of squatted) c.destroy();
        await new Promise((r) => squatter.close(r));
      }
    });
    it('scores the clean mail lower than the spammy one, and passes it', async () => {
      const spammy = await scanMessage(parseScanner(scanner.url), SPAMMY, OPTS);
      const clean = await scanMessage(parseScanner(scanner.url), CLEAN, OPTS);
      assert.equal(clean.verdict, 'pass', JSON.stringify(clean));
      assert.ok(clean.score! < spammy.score!, `${clean.score} < ${spammy.score}`);
      assert.ok(!clean.rules.some((r) => r.name === 'MISSING_DATE'));
    });
  });
}
