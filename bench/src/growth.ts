// 4. Growth: list latency and SMTP ingest rate with 10,000 and with 1,000,000
// stored mails (two servers side by side, measured alternately). The measured
// inbox holds 20 mails in both; the rest is spread over 1,000 seeded addresses
// that also receive the ingest load. Target: large/small at most 1.5 for both.
import { performance } from 'node:perf_hooks';
import { createAddress, getJson, sequentialLatencies } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { DOMAIN } from './lib/paths.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast } from './lib/smtp-client.js';
import { fmt, median, percentile, round } from './lib/stats.js';
import { jwtFor, seedAddress, seedDataDir, startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const TARGET = 1.5;
const CONNECTIONS = 10;

interface Round {
  listP50: number;
  listP99: number;
  listMean: number;
  listMax: number;
  listRequests: number;
  /** Listing a seeded inbox (count/addresses mails): informational. */
  seededListP50: number;
  ingestRate: number;
  ingestMessages: number;
}

export const growth: Bench = async (ctx) => {
  const p = ctx.quick
    ? { small: 1_000, large: 10_000, addresses: 100, rounds: 1, listSeconds: 1, ingestSeconds: 1 }
    : { small: 10_000, large: 1_000_000, addresses: 1_000, rounds: 5, listSeconds: 5, ingestSeconds: 5 };
  const servers: TempInbox[] = [];
  try {
    const t0 = performance.now();
    ctx.log(`seeding ${p.small} and ${p.large} mails over ${p.addresses} addresses each`);
    const [small, large] = await Promise.all([seedDataDir(p.small - 20, p.addresses), seedDataDir(p.large - 20, p.addresses)]);
    ctx.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const tmpl = messageTemplate(3 * 1024, `growth${Date.now()}`);
    const setups: { label: string; server: TempInbox; inbox: { address: string; jwt: string }; seededJwt: string; seededMails: number; startSeconds: number; seedSeconds: number }[] = [];
    for (const [label, seeded] of [[`${p.small.toLocaleString('en-US')}`, small], [`${p.large.toLocaleString('en-US')}`, large]] as const) {
      const t1 = performance.now();
      const server = await startTempInbox({ dataDir: seeded.dataDir, name: `temp-inbox-${label}` });
      const startSeconds = (performance.now() - t1) / 1000;
      servers.push(server);
      const inbox = await createAddress(server.httpUrl);
      await blast({ port: server.smtpPort, connections: 1, messages: 20, recipient: () => inbox.address, message: tmpl });
      const seededJwt = await jwtFor(seeded.first);
      const seededMails = (await getJson<{ count: number }>(`${server.httpUrl}/api/mails?limit=1&offset=0`, seededJwt)).count;
      setups.push({ label, server, inbox, seededJwt, seededMails, startSeconds, seedSeconds: seeded.seconds });
    }

    let offset = 0;
    const measure = (s: (typeof setups)[number], listSeconds: number, ingestSeconds: number) => async (): Promise<Round> => {
      const lat = await sequentialLatencies(`${s.server.httpUrl}/api/mails?limit=20&offset=0`, { authorization: `Bearer ${s.inbox.jwt}` }, listSeconds);
      const seededLat = await sequentialLatencies(`${s.server.httpUrl}/api/mails?limit=20&offset=0`, { authorization: `Bearer ${s.seededJwt}` }, listSeconds / 2);
      const ing = await blast({
        port: s.server.smtpPort,
        connections: CONNECTIONS,
        seconds: ingestSeconds,
        offset,
        // Spread over the seeded addresses, as real traffic to many inboxes would be.
        recipient: (i) => seedAddress((i * 7919) % p.addresses, DOMAIN),
        message: tmpl,
      });
      offset += ing.messages;
      return {
        listP50: round(percentile(lat, 50), 4),
        listP99: round(percentile(lat, 99), 4),
        listMean: round(lat.reduce((a, b) => a + b, 0) / lat.length, 4),
        listMax: round(Math.max(...lat), 2),
        listRequests: lat.length,
        seededListP50: round(percentile(seededLat, 50), 4),
        ingestRate: round(ing.rate, 1),
        ingestMessages: ing.messages,
      };
    };
    ctx.log('warm-up');
    for (const s of setups) await measure(s, 0.5, 0.5)();
    const samples = await interleave(p.rounds, Object.fromEntries(setups.map((s) => [s.label, measure(s, p.listSeconds, p.ingestSeconds)])), ctx.log);
    const [a, b] = setups.map((s) => samples[s.label]!);
    const m = (rs: Round[], k: keyof Round) => median(rs.map((r) => r[k]));
    const worst = (rs: Round[]) => Math.max(...rs.map((r) => r.listMax));
    const listRatio = m(b!, 'listP50') / m(a!, 'listP50');
    const ingestRatio = m(a!, 'ingestRate') / m(b!, 'ingestRate');
    const [sl, ll] = [setups[0]!.label, setups[1]!.label];
    const rows: Row[] = [
      {
        bench: 'growth',
        measure: `list p50 (1 conn), ${ll} vs ${sl} mails`,
        ours: `${fmt(m(b!, 'listP50'), 3)} ms (p99 ${fmt(m(b!, 'listP99'))}, worst ${fmt(worst(b!))})`,
        baseline: `${fmt(m(a!, 'listP50'), 3)} ms (p99 ${fmt(m(a!, 'listP99'))}, worst ${fmt(worst(a!))})`,
        result: `ratio ${fmt(listRatio)}`,
        target: `≤ ${TARGET}`,
        verdict: verdict(listRatio <= TARGET),
        values: { large: m(b!, 'listP50'), small: m(a!, 'listP50'), largeP99: m(b!, 'listP99'), smallP99: m(a!, 'listP99'), largeWorst: worst(b!), smallWorst: worst(a!), ratio: round(listRatio, 3) },
      },
      {
        bench: 'growth',
        measure: `SMTP ingest, ${ll} vs ${sl} mails`,
        ours: `${fmt(m(b!, 'ingestRate'))} msg/s`,
        baseline: `${fmt(m(a!, 'ingestRate'))} msg/s`,
        result: `ratio ${fmt(ingestRatio)}`,
        target: `≤ ${TARGET}`,
        verdict: verdict(ingestRatio <= TARGET),
        values: { large: m(b!, 'ingestRate'), small: m(a!, 'ingestRate'), ratio: round(ingestRatio, 3) },
      },
      {
        bench: 'growth',
        measure: `list p50 of a seeded inbox (${setups[1]!.seededMails} vs ${setups[0]!.seededMails} mails)`,
        ours: `${fmt(m(b!, 'seededListP50'), 3)} ms`,
        baseline: `${fmt(m(a!, 'seededListP50'), 3)} ms`,
        result: `ratio ${fmt(m(b!, 'seededListP50') / m(a!, 'seededListP50'))}`,
        target: '(none)',
        verdict: 'info',
        values: { large: m(b!, 'seededListP50'), small: m(a!, 'seededListP50'), largeInbox: setups[1]!.seededMails, smallInbox: setups[0]!.seededMails },
      },
    ];
    return {
      rows,
      details: {
        params: { ...p, connections: CONNECTIONS, messageBytes: 3 * 1024 },
        setup: setups.map((s) => ({ label: s.label, seedSeconds: s.seedSeconds, startSeconds: s.startSeconds, seededInboxMails: s.seededMails })),
        samples,
      },
    };
  } finally {
    for (const s of servers) await s.stop();
  }
};
