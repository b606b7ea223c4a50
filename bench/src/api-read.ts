// 1. API read: GET /api/mails?limit=20&offset=0 and GET /api/mail/{uuid} for an
// inbox of 20 mails in a store of 1,000,000 (1,000 in --quick), 50 connections, against a bare
// node:http server answering the same bytes, alternating in the same run; then the list
// from two nodes on one PostgreSQL database (api-read-postgres.ts).
// Targets: the list at least 1.3 of the bare server's throughput, the mail 0.5, the list
// on PostgreSQL with two nodes 0.5. CPU a request of each side is in the row.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresTwoNodes } from './api-read-postgres.js';
import { startBareHttp } from './lib/baselines.js';
import { createAddress, getJson, httpRequest } from './lib/http.js';
import { httpLoad, interleave, type HttpLoad } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { makeTempDir, withCpu } from './lib/procs.js';
import { verdict, type Bench, type Row } from './lib/report.js';
import { blast } from './lib/smtp-client.js';
import { fmt, median, round } from './lib/stats.js';
import { seedDataDir, startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import type { Baseline } from './lib/baselines.js';

const TARGETS = { list: 1.3, mail: 0.5 };
/** PostgreSQL's store is smaller in a full run: seeding it takes far longer than SQLite's. */
const PG_STORE = 100_000;

export const apiRead: Bench = async (ctx) => {
  const p = ctx.quick
    ? { store: 1_000, addresses: 50, seconds: 2, warmup: 0.5, rounds: 1, connections: 50 }
    : { store: 1_000_000, addresses: 1_000, seconds: 8, warmup: 2, rounds: 5, connections: 50 };
  let server: TempInbox | undefined;
  let bare: Baseline | undefined;
  try {
    ctx.log(`seeding ${p.store - 20} mails over ${p.addresses} addresses`);
    const seeded = await seedDataDir(p.store - 20, p.addresses);
    server = await startTempInbox({ dataDir: seeded.dataDir, name: 'temp-inbox-api' });
    const { address, jwt } = await createAddress(server.httpUrl);
    const tmpl = messageTemplate(3 * 1024, `api${Date.now()}`);
    await blast({ port: server.smtpPort, connections: 1, messages: 20, recipient: () => address, message: tmpl });

    const listPath = '/api/mails?limit=20&offset=0';
    const list = await getJson<{ results: { uuid: string }[]; count: number }>(server.httpUrl + listPath, jwt);
    if (list.results.length !== 20 || list.count !== 20) throw new Error(`expected 20 listed mails, got ${list.results.length}/${list.count}`);
    const mailPath = `/api/mail/${list.results[10]!.uuid}`;
    const auth = { authorization: `Bearer ${jwt}` };

    // Capture our exact response bytes for the bare server.
    const dir = makeTempDir('bare');
    const routes = [];
    const responseBytes: Record<string, number> = {};
    for (const [prefix, path] of [['/api/mails', listPath], ['/api/mail/', mailPath]] as const) {
      const res = await httpRequest(server.httpUrl + path, { headers: auth });
      const file = join(dir, prefix.replace(/\W/g, '_'));
      writeFileSync(file, res.body);
      responseBytes[prefix] = res.body.length;
      routes.push({ prefix, file, contentType: String(res.headers['content-type']) });
    }
    bare = await startBareHttp(routes);
    const bareUrl = `http://127.0.0.1:${bare.port}`;

    const rows: Row[] = [];
    const details: Record<string, unknown> = { params: p, seedSeconds: seeded.seconds, responseBytes };
    for (const [label, path, target] of [['GET /api/mails?limit=20', listPath, TARGETS.list], ['GET /api/mail/{uuid}', mailPath, TARGETS.mail]] as const) {
      const run = (base: string, pid: number) => () => withCpu(pid, () => httpLoad(base + path, { connections: p.connections, seconds: p.seconds, headers: auth }));
      ctx.log(`${label}: warm-up`);
      await httpLoad(server.httpUrl + path, { connections: p.connections, seconds: p.warmup, headers: auth });
      await httpLoad(bareUrl + path, { connections: p.connections, seconds: p.warmup, headers: auth });
      const samples = await interleave(p.rounds, { 'temp-inbox': run(server.httpUrl, server.child.pid), 'bare node:http': run(bareUrl, bare.child.pid) }, ctx.log);
      const ours = median(samples['temp-inbox']!.map((s) => s.rps));
      const base = median(samples['bare node:http']!.map((s) => s.rps));
      const ratio = ours / base;
      const p99 = median(samples['temp-inbox']!.map((s) => s.latencyP99));
      const oursCpu = median(samples['temp-inbox']!.map((s) => s.serverCpu));
      const baselineCpu = median(samples['bare node:http']!.map((s) => s.serverCpu));
      // CPU µs a request: the figure that tells when the load generator, not a server, sets the rate.
      const oursUs = (oursCpu / ours) * 1e6;
      const baseUs = (baselineCpu / base) * 1e6;
      rows.push({
        bench: 'api-read',
        measure: `${label} req/s, ${p.connections} conns`,
        ours: `${fmt(ours)} req/s (p99 ${fmt(p99)} ms, ${fmt(oursUs)} µs CPU a request)`,
        baseline: `${fmt(base)} req/s (bare node:http, ${fmt(baseUs)} µs)`,
        result: `ratio ${fmt(ratio)}`,
        target: `≥ ${target}`,
        verdict: verdict(ratio >= target),
        values: { ours: round(ours), baseline: round(base), ratio: round(ratio, 3), oursP99Ms: p99, oursCpu, baselineCpu, oursCpuUs: round(oursUs, 1), baselineCpuUs: round(baseUs, 1) },
      });
      details[label] = samples as Record<string, HttpLoad[]>;
    }
    await bare.stop();
    bare = undefined;
    await server.stop();
    server = undefined;
    const pg = await postgresTwoNodes({ ...p, store: Math.min(p.store, PG_STORE) }, ctx.log);
    rows.push(pg.row);
    details['postgres, two nodes'] = pg.details;
    return { rows, details };
  } finally {
    await bare?.stop();
    await server?.stop();
  }
};
