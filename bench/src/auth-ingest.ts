// 9. Authentication checks (docs/decisions.md "Authentication verdicts"): SMTP
// ingest with AUTH_CHECKS on against the same with them off, both servers asking a
// local DNS server (dns2, in this process) that serves the sender's SPF, DKIM and
// DMARC records. The checks run before the 250, so their cost is in this rate.
//  a) one sender domain: DKIM-signed (RSA-2048) 3 KB mail from app.example.com; after
//     the first mail every record comes from the server's cache (the usual case: a
//     test's mail comes from one application);
//  b) a new envelope domain every mail (m<i>.bench.test): one SPF look-up each that
//     no cache holds, plus the same DKIM and DMARC as (a).
// Target: (a) at least 0.5 of the rate with the checks off; (b) is informational. The
// verdicts of the last mails are read back and counted: the rate is that of checks
// that passed.
//
//   node --import tsx bench/src/run.ts --only=auth-ingest [--quick]
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { startBenchDns, type BenchDns } from './lib/dns-server.js';
import { createAddress, getJson } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast, type BlastResult } from './lib/smtp-client.js';
import { withCpu } from './lib/procs.js';
import { fmt, median, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import { CONNECTIONS, MESSAGE_BYTES } from './smtp-ingest.js';

const TARGET = 0.5;
/** Signed messages made before the run and sent in turn (signing costs the load generator ~2 ms each). */
const POOL = 64;
const SENDER_DOMAIN = 'app.example.com';
const SELECTOR = 'b1';

/** The DKIM-signed messages of the run (the bench template, From app.example.com, signed once each) and the key's TXT record. */
async function signedPool(): Promise<{ pool: Buffer[]; keyRecord: string }> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    dkim: { domainName: SENDER_DOMAIN, keySelector: SELECTOR, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
  });
  const template = messageTemplate(MESSAGE_BYTES, `auth${Date.now()}`);
  const pool: Buffer[] = [];
  // The To: header is the same for every recipient (RCPT TO decides delivery), so one pool serves every address.
  for (let i = 0; i < POOL; i++) {
    const info = await transport.sendMail({ envelope: { from: `no-reply@${SENDER_DOMAIN}`, to: ['signup@temp-inbox.localhost'] }, raw: template(i, 'signup@temp-inbox.localhost') });
    pool.push(Buffer.from(info.message as Buffer));
  }
  return { pool, keyRecord: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}` };
}

/** The zone: app.example.com's SPF, key and DMARC, and an SPF record for any m<i>.bench.test. */
const zone = (keyRecord: string) => (name: string): string[] | undefined => {
  if (name === SENDER_DOMAIN) return ['v=spf1 ip4:127.0.0.1 -all'];
  if (name === `${SELECTOR}._domainkey.${SENDER_DOMAIN}`) return [keyRecord];
  if (name === `_dmarc.${SENDER_DOMAIN}`) return ['v=DMARC1; p=reject'];
  if (/^m\d+\.bench\.test$/.test(name)) return ['v=spf1 ip4:127.0.0.1 -all'];
  return undefined;
};

export const authIngest: Bench = async (ctx) => {
  // Three short rounds even when quick: the ratio is taken round by round (on and off run back to back), and the median of those is reported.
  // The warm-up is long enough, even when quick, for the checks' thread to reach its steady rate: until its
  // JIT has compiled mailauth (some thousands of mails) a check costs two to three times its steady CPU.
  const p = ctx.quick ? { seconds: 1, warmup: 1.5, rounds: 3 } : { seconds: 5, warmup: 2, rounds: 5 };
  let dns: BenchDns | undefined;
  let on: TempInbox | undefined;
  let off: TempInbox | undefined;
  try {
    const { pool, keyRecord } = await signedPool();
    dns = await startBenchDns(zone(keyRecord));
    on = await startTempInbox({ name: 'temp-inbox-auth-on', env: { DNS_SERVERS: dns.server } });
    off = await startTempInbox({ name: 'temp-inbox-auth-off', env: { DNS_SERVERS: dns.server, AUTH_CHECKS: 'off' } });
    const onAddresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(on!.httpUrl)));
    const offAddresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(off!.httpUrl)));
    let offset = 0;
    let fresh = 0;
    const run = (server: TempInbox, addresses: { address: string }[], from: (i: number) => string, seconds: number) => async () => {
      const r = await withCpu(server.child.pid, () =>
        blast({ port: server.smtpPort, connections: CONNECTIONS, seconds, offset, from, recipient: (_i, c) => addresses[c]!.address, message: (i) => pool[i % POOL]! }),
      );
      offset += r.messages;
      return r;
    };
    const oneDomain = () => `no-reply@${SENDER_DOMAIN}`;
    // Every mail of the cold runs has an envelope domain never used before in the run.
    const newDomain = () => `bounce@m${fresh++}.bench.test`;
    const subjects = (seconds: number) => ({
      'checks on': run(on!, onAddresses, oneDomain, seconds),
      'checks off': run(off!, offAddresses, oneDomain, seconds),
      'checks on, new domain': run(on!, onAddresses, newDomain, seconds),
      'checks off, new domain': run(off!, offAddresses, newDomain, seconds),
    });
    ctx.log(`warm-up (${p.warmup} s each)`);
    for (const fn of Object.values(subjects(p.warmup))) await fn();
    const asked = dns.queries.length;
    const samples = await interleave(p.rounds, subjects(p.seconds), (m) => ctx.log(m));
    // What the checks found, so that the rate is known to be that of checks that passed:
    // the last 100 mails of each address of the server with checks on.
    const verdicts = new Map<string, number>();
    for (const a of onAddresses) {
      const page = await getJson<{ results: { metadata: string }[] }>(`${on.httpUrl}/api/mails?limit=100&offset=0`, a.jwt);
      for (const m of page.results) {
        const key = JSON.stringify((JSON.parse(m.metadata) as { auth?: unknown }).auth ?? null);
        verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
      }
    }
    const expected = JSON.stringify({ spf: 'pass', dkim: [{ domain: SENDER_DOMAIN, selector: SELECTOR, result: 'pass' }], dmarc: 'pass', arc: 'none' });
    const checked = [...verdicts.values()].reduce((a, b) => a + b, 0);
    const passed = verdicts.get(expected) ?? 0;
    ctx.log(`verdicts of the last ${checked} mails: ${passed} as expected; ${JSON.stringify(Object.fromEntries([...verdicts].filter(([k]) => k !== expected)))}`);
    const rate = (name: string) => median((samples[name] ?? []).map((s: BlastResult) => s.rate));
    const cpu = (name: string) => median((samples[name] ?? []).map((s) => s.serverCpu));
    const row = (measure: string, onName: string, offName: string, target: boolean): Row => {
      // Each round's on and off ran one after the other, under the same load from the rest of the machine.
      const ratio = median((samples[onName] ?? []).map((s, i) => s.rate / samples[offName]![i]!.rate));
      return {
        bench: 'auth-ingest',
        measure,
        ours: `${fmt(rate(onName))} msg/s (checks on)`,
        baseline: `${fmt(rate(offName))} msg/s (AUTH_CHECKS=off)`,
        result: `ratio ${fmt(ratio)} (median of rounds)`,
        target: target ? `≥ ${TARGET}` : '(none)',
        verdict: target ? verdict(ratio >= TARGET) : 'info',
        values: { ours: round(rate(onName)), baseline: round(rate(offName)), ratio: round(ratio, 3), oursCpu: cpu(onName), baselineCpu: cpu(offName), verdictsChecked: checked, verdictsPassed: passed },
      };
    };
    const rows = [
      row(`${fmt(MESSAGE_BYTES / 1024, 1)} KB DKIM-signed msgs, ${CONNECTIONS} conns, one sender domain, local DNS`, 'checks on', 'checks off', true),
      row(`the same, a new envelope domain every mail (an uncached SPF look-up each)`, 'checks on, new domain', 'checks off, new domain', false),
    ];
    return { rows, details: { params: { ...p, connections: CONNECTIONS, messageBytes: pool[0]!.length, pool: POOL }, dnsQueriesDuringRounds: dns.queries.length - asked, verdicts: Object.fromEntries(verdicts), samples } };
  } finally {
    await off?.stop();
    await on?.stop();
    await dns?.close();
  }
};
