// One client asking again and again for the parsed view of mail built to take the whole
// parse budget (docs/security.md "Parsing"): each such mail is parsed once, its degraded
// view kept with it; the client's requests past its share are refused rather than queued;
// another client's parsed view and a third party's SMTP delivery stay within a bound.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, request, SmtpClient, sendMail, startTestServer, type HttpResult, type TestServer } from '../../helpers/harness.js';
import { twoNodes } from '../../helpers/nodes.js';
import { skipUnless } from '../../helpers/services.js';

const crlf = (lines: string[]) => lines.join('\r\n');
const BUDGET_MS = 1000;

/** 300,000 empty parts: far more than one budget of parsing. */
function hostile(n: number): string {
  return crlf([`Subject: slow ${n}`, 'Content-Type: multipart/mixed; boundary="b"', '', ...Array.from({ length: 300_000 }, () => '--b\r\n\r\nx'), '--b--', '']);
}

describe('parsed views under a storm of requests for slow mail', { timeout: 300_000 }, () => {
  let server: TestServer;
  let attacker: { address: string; jwt: string };
  let victim: { address: string; jwt: string };
  const slow: string[] = [];
  let normal: string;
  before(async () => {
    server = await startTestServer({ PARSE_TIMEOUT: `${BUDGET_MS}ms`, PARSE_VIEWS_PER_CLIENT: '4' });
    attacker = await createAddress(server);
    victim = await createAddress(server);
    for (let i = 0; i < 3; i++) await sendMail(server.smtpPort, { to: [attacker.address], message: hostile(i) });
    await sendMail(server.smtpPort, { to: [victim.address], message: crlf(['Subject: hello', 'Content-Type: text/plain', '', 'your code 123456', '']) });
    const list = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt: attacker.jwt });
    slow.push(...list.json.results.map((m: { uuid: string }) => m.uuid));
    normal = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: victim.jwt })).json.results[0].uuid;
    assert.equal(slow.length, 3);
  });
  after(() => server.close());

  it('each slow mail is parsed once; another client is answered within about one budget, a third party gets 250 within a bound', async (t) => {
    const parsesBefore = server.mail.viewParses();
    const statuses = new Map<number, number>();
    let stop = false;
    // Waves of 16 concurrent requests from one client (127.0.0.1), over the three slow mails, until told to stop.
    const storm = (async () => {
      let waves = 0;
      while (!stop || waves < 3) {
        const wave = await Promise.all(
          Array.from({ length: 16 }, (_, i) => request(server.httpUrl, `/api/mail/${slow[i % 3]}/parsed`, { jwt: attacker.jwt }).then((r) => r.status)),
        );
        for (const s of wave) statuses.set(s, (statuses.get(s) ?? 0) + 1);
        waves++;
      }
    })();
    // Give the storm time to fill whatever it can: until the first slow parse is under way.
    const deadline = Date.now() + 30_000;
    while (server.mail.viewParses() === parsesBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(server.mail.viewParses() > parsesBefore, 'the storm started a parse');

    // Another client's view of an ordinary mail: it waits for at most the slow parse that runs (and a fresh thread after it).
    const t0 = performance.now();
    const other = await request(server.httpUrl, `/api/mail/${normal}/parsed`, { jwt: victim.jwt, localAddress: '127.0.0.2' });
    const otherMs = performance.now() - t0;
    assert.equal(other.status, 200, other.text);
    assert.equal(other.json.degraded, false);
    assert.deepEqual(other.json.codes, ['123456']);

    // A third party's delivery meanwhile.
    const t1 = performance.now();
    const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.3');
    try {
      await smtp.script([
        ['EHLO third.test', 250],
        ['MAIL FROM:<third@example.com>', 250],
        [`RCPT TO:<${victim.address}>`, 250],
        ['DATA', 354],
      ]);
      const final = await smtp.data(crlf(['Subject: third party', '', 'hi', '']));
      assert.equal(final.code, 250, final.text);
    } finally {
      await smtp.quit();
    }
    const smtpMs = performance.now() - t1;
    stop = true;
    await storm;

    const parses = server.mail.viewParses() - parsesBefore;
    t.diagnostic(`another client's view ${Math.round(otherMs)} ms, a third party's 250 ${Math.round(smtpMs)} ms, ${parses} parses, statuses ${JSON.stringify([...statuses])}`);
    // One budget, a fresh thread for the next parse, and the noise of a shared machine.
    assert.ok(otherMs < 4 * BUDGET_MS + 2000, `another client's parsed view took ${Math.round(otherMs)} ms`);
    assert.ok(smtpMs < 5000, `a third party's delivery took ${Math.round(smtpMs)} ms`);
    // Each slow mail was parsed once, and the victim's once: every other request was answered from the kept view or refused.
    assert.equal(parses, 4);
    assert.ok((statuses.get(200) ?? 0) > 0, 'the slow mail is answered');
    assert.ok((statuses.get(429) ?? 0) > 0, "the client's requests past its share are refused");
    for (const s of statuses.keys()) assert.ok(s === 200 || s === 429, `status ${s}`);
  });

  it('the kept degraded view answers later requests without a parse, and survives a restart', async () => {
    const before = server.mail.viewParses();
    const res = await request(server.httpUrl, `/api/mail/${slow[0]}/parsed`, { jwt: attacker.jwt, localAddress: '127.0.0.4' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.degraded, true);
    assert.match(res.json.subject, /^slow \d$/);
    assert.equal(server.mail.viewParses(), before, 'not parsed again');
    // Kept in the store: a server started on the same data answers it without a parse too.
    await server.close({ keepData: true });
    server = await startTestServer({ PARSE_TIMEOUT: `${BUDGET_MS}ms` }, server.dataDir);
    const again = await request(server.httpUrl, `/api/mail/${slow[1]}/parsed`, { jwt: attacker.jwt });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.degraded, true);
    assert.equal(server.mail.viewParses(), 0, 'the restarted server parsed nothing');
    const mailtm = await request(server.httpUrl, `/mailtm/messages/${slow[2]}`, { headers: { authorization: `Bearer ${attacker.jwt}`, accept: 'application/json' } });
    assert.equal(mailtm.status, 200, mailtm.text);
    assert.equal(mailtm.json.text, '');
    assert.equal(server.mail.viewParses(), 0, 'GET /mailtm/messages/{id} reads the kept view too');
  });
});

describe('GET /mailtm/messages/{id} is a parsed view', () => {
  it('counts in RATE_LIMIT_PARSED_MAIL with GET /api/mail/{uuid}/parsed, not in the 480 a minute of RATE_LIMIT_MAILTM', async () => {
    const server = await startTestServer({ RATE_LIMIT_PARSED_MAIL: '3/60', RATE_LIMIT_MAILTM: '100/60' });
    try {
      const { address, jwt } = await createAddress(server);
      await sendMail(server.smtpPort, { to: [address], message: crlf(['Subject: counted', '', 'x', '']) });
      const { uuid } = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0];
      const mailtm = (path: string) => request(server.httpUrl, `/mailtm${path}`, { headers: { authorization: `Bearer ${jwt}`, accept: 'application/json' } });
      assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt })).status, 200);
      assert.equal((await mailtm(`/messages/${uuid}`)).status, 200);
      assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt })).status, 200);
      const refused = await mailtm(`/messages/${uuid}`);
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(refused.json.detail, 'Too many requests; slow down and retry later.', "in mail.tm's shape");
      assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt })).status, 429, 'one budget');
      assert.equal((await mailtm('/messages')).status, 200, 'the list keeps RATE_LIMIT_MAILTM');
    } finally {
      await server.close();
    }
  });
});

/** Polls `condition` until it holds, for at most 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), what);
}

function assertPlainRefusal(res: HttpResult, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, what);
  assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/, what);
  assert.ok(res.text.length > 0 && !res.text.includes('  at '), what);
}

describe('parsed views waiting: PARSE_VIEWS_PER_CLIENT and PARSE_VIEWS_WAITING', { timeout: 120_000 }, () => {
  it("a client past its share gets a plain 429 with Retry-After; past the total, any client a 503; a view that is kept needs no share", async () => {
    const server = await startTestServer({ PARSE_TIMEOUT: `${BUDGET_MS}ms`, PARSE_VIEWS_PER_CLIENT: '1', PARSE_VIEWS_WAITING: '2' });
    try {
      const { address, jwt } = await createAddress(server);
      for (let i = 0; i < 3; i++) await sendMail(server.smtpPort, { to: [address], message: hostile(i) });
      const uuids: string[] = (await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt })).json.results.map((m: { uuid: string }) => m.uuid);
      const parsed = (uuid: string, localAddress: string) => request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt, localAddress });
      const first = parsed(uuids[0]!, '127.0.0.1');
      // Once the first is under way: the same client's second view is refused, another client's waits.
      await until(() => server.mail.viewParses() > 0, 'the first view is parsed');
      assertPlainRefusal(await parsed(uuids[1]!, '127.0.0.1'), 429, 'the same client, another mail');
      const second = parsed(uuids[1]!, '127.0.0.2');
      // Two views wait or parse in all: a third client is refused with 503.
      await until(() => server.mail.viewsOpen() === 2, 'both views wait or parse');
      assertPlainRefusal(await parsed(uuids[2]!, '127.0.0.3'), 503, 'past PARSE_VIEWS_WAITING');
      assert.equal((await first).status, 200);
      assert.equal((await second).status, 200);
      // Kept now: as many at once as the client likes, none parsed.
      const before = server.mail.viewParses();
      const again = await Promise.all([0, 1, 0, 1].map((i) => parsed(uuids[i]!, '127.0.0.1')));
      assert.deepEqual(again.map((r) => [r.status, r.json.degraded]), Array(4).fill([200, true]));
      assert.equal(server.mail.viewParses(), before);
    } finally {
      await server.close();
    }
  });
});

const skip = skipUnless('postgres', 'redis');

describe('a kept degraded view serves every node', { timeout: 120_000 }, () => {
  const nodes = twoNodes('pvs', skip, { PARSE_TIMEOUT: `${BUDGET_MS}ms` });

  it('parsed on node a, answered by node b without a parse', { skip }, async () => {
    const { address, jwt } = await createAddress(nodes.a);
    await sendMail(nodes.a.smtpPort, { to: [address], message: hostile(9) });
    const { uuid } = (await request(nodes.a.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0];
    const onA = await request(nodes.a.httpUrl, `/api/mail/${uuid}/parsed`, { jwt });
    assert.equal(onA.status, 200, onA.text);
    assert.equal(onA.json.degraded, true);
    assert.equal(nodes.a.mail.viewParses(), 1);
    const onB = await request(nodes.b.httpUrl, `/api/mail/${uuid}/parsed`, { jwt });
    assert.equal(onB.status, 200, onB.text);
    assert.equal(onB.text, onA.text, 'the same answer');
    assert.equal(nodes.b.mail.viewParses(), 0, 'node b parsed nothing');
  });
});
