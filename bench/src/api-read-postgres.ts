// 1, PostgreSQL with two nodes: GET /api/mails?limit=20&offset=0 from two servers on one
// database (a schema of its own, seeded, dropped at the end), half the connections on each,
// against the bare node:http server answering the same bytes with all of them, alternating.
// The 20 mails arrive through node A; the page is checked through node B before measuring.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBareHttp, type Baseline } from './lib/baselines.js';
import { createAddress, getJson, httpRequest } from './lib/http.js';
import { httpLoad, interleave, type HttpLoad } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { benchSchema, dropSchema, PG_URL, pgReachable } from './lib/pg.js';
import { cpuSecondsOf, makeTempDir, runChild } from './lib/procs.js';
import { CHILDREN_DIR } from './lib/paths.js';
import { verdict, type Row } from './lib/report.js';
import { blast } from './lib/smtp-client.js';
import { fmt, median, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';

const TARGET = 0.5;
const MEASURE = 'GET /api/mails?limit=20 req/s, 50 conns, PostgreSQL, two nodes';

export interface PostgresReadParams {
  store: number;
  addresses: number;
  seconds: number;
  warmup: number;
  rounds: number;
  connections: number;
}

type Sample = HttpLoad & { serverCpu: number };

/** Both loads at once, their rates summed; CPU: the cores the given processes used meanwhile, summed. */
async function measured(pids: number[], loads: (() => Promise<HttpLoad>)[]): Promise<Sample> {
  const c0 = pids.map(cpuSecondsOf);
  const t0 = performance.now();
  const runs = await Promise.all(loads.map((l) => l()));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = pids.reduce((sum, pid, i) => sum + (cpuSecondsOf(pid) - c0[i]!), 0) / seconds;
  return {
    rps: runs.reduce((s, r) => s + r.rps, 0),
    latencyP50: Math.max(...runs.map((r) => r.latencyP50)),
    latencyP99: Math.max(...runs.map((r) => r.latencyP99)),
    requests: runs.reduce((s, r) => s + r.requests, 0),
    serverCpu: Math.round(cpu * 100) / 100,
  };
}

export async function postgresTwoNodes(p: PostgresReadParams, log: (m: string) => void): Promise<{ row: Row; details: unknown }> {
  if (!(await pgReachable())) {
    log(`PostgreSQL: not reachable at ${PG_URL}; not measured`);
    return { row: { bench: 'api-read', measure: MEASURE, ours: '', baseline: '', result: `no PostgreSQL at ${PG_URL}`, target: `≥ ${TARGET}`, verdict: 'not measured' }, details: {} };
  }
  const schema = benchSchema('api_read');
  const nodes: TempInbox[] = [];
  let bare: Baseline | undefined;
  try {
    log(`PostgreSQL: seeding ${p.store - 20} mails over ${p.addresses} addresses (schema ${schema})`);
    const out = await runChild({ name: 'seed-api-read', tsx: true, args: [join(CHILDREN_DIR, 'seed.ts'), JSON.stringify({ databaseUrl: PG_URL, schema, count: p.store - 20, addresses: p.addresses })] }, 30 * 60_000);
    const seedSeconds = (JSON.parse(/SEEDED (\{.*\})/.exec(out)?.[1] ?? '{"seconds":null}') as { seconds: number | null }).seconds;
    const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
    for (const name of ['a', 'b']) nodes.push(await startTempInbox({ name: `temp-inbox-api-pg-${name}`, env }));
    const [a, b] = nodes as [TempInbox, TempInbox];
    const { address, jwt } = await createAddress(a.httpUrl);
    await blast({ port: a.smtpPort, connections: 1, messages: 20, recipient: () => address, message: messageTemplate(3 * 1024, `apipg${Date.now()}`) });

    const path = '/api/mails?limit=20&offset=0';
    const auth = { authorization: `Bearer ${jwt}` };
    const onB = await getJson<{ results: unknown[]; count: number }>(b.httpUrl + path, jwt);
    if (onB.results.length !== 20 || onB.count !== 20) throw new Error(`node B lists ${onB.results.length}/${onB.count} of the 20 mails node A took`);
    const res = await httpRequest(a.httpUrl + path, { headers: auth });
    const file = join(makeTempDir('bare-pg'), 'list');
    writeFileSync(file, res.body);
    bare = await startBareHttp([{ prefix: '/api/mails', file, contentType: String(res.headers['content-type']) }]);
    const bareUrl = `http://127.0.0.1:${bare.port}${path}`;

    const half = Math.floor(p.connections / 2);
    const load = (url: string, connections: number, seconds: number) => () => httpLoad(url, { connections, seconds, headers: auth });
    const twoNodes = (seconds: number) => [load(a.httpUrl + path, half, seconds), load(b.httpUrl + path, p.connections - half, seconds)];
    log('PostgreSQL, two nodes: warm-up');
    await Promise.all(twoNodes(p.warmup).map((l) => l()));
    await load(bareUrl, p.connections, p.warmup)();
    const samples = await interleave(
      p.rounds,
      { 'temp-inbox, two nodes': () => measured([a.child.pid, b.child.pid], twoNodes(p.seconds)), 'bare node:http': () => measured([bare!.child.pid], [load(bareUrl, p.connections, p.seconds)]) },
      log,
    );
    const ours = median(samples['temp-inbox, two nodes']!.map((s) => s.rps));
    const base = median(samples['bare node:http']!.map((s) => s.rps));
    const ratio = ours / base;
    const oursCpu = median(samples['temp-inbox, two nodes']!.map((s) => s.serverCpu));
    const baselineCpu = median(samples['bare node:http']!.map((s) => s.serverCpu));
    const row: Row = {
      bench: 'api-read',
      measure: MEASURE,
      ours: `${fmt(ours)} req/s (p99 ${fmt(median(samples['temp-inbox, two nodes']!.map((s) => s.latencyP99)))} ms, ${fmt((oursCpu / ours) * 1e6)} µs CPU a request)`,
      baseline: `${fmt(base)} req/s (bare node:http, ${fmt((baselineCpu / base) * 1e6)} µs)`,
      result: `ratio ${fmt(ratio)}`,
      target: `≥ ${TARGET}`,
      verdict: verdict(ratio >= TARGET),
      values: { ours: round(ours), baseline: round(base), ratio: round(ratio, 3), oursCpu, baselineCpu, store: p.store },
    };
    return { row, details: { seedSeconds, responseBytes: res.body.length, samples } };
  } finally {
    await bare?.stop();
    for (const n of nodes) await n.stop();
    await dropSchema(schema);
  }
}
