// Debian's Prometheus (apt install prometheus) for the tests that query what the service
// exports: started on a free port with a data directory of its own, scraping the given
// targets every second with the metrics token; stopped (and its directory removed) by stop().
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './spam-scanners.js';

export const PROMETHEUS_PATH = '/usr/bin/prometheus';
/** Starts tried on a new port when the one picked was taken before Prometheus bound it. */
const BIND_TRIES = 5;
const READY_MS = 30_000;

export interface RunningPrometheus {
  url: string;
  /** A PromQL instant query's answer as Prometheus sends it (status, data or error). */
  query(expr: string): Promise<{ status: string; data?: { resultType: string; result: unknown[] }; error?: string }>;
  /** The values of `label` among the series `match` selects (what Grafana's label_values asks). */
  labelValues(label: string, match: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** false when Prometheus is installed, else why (throws under REQUIRE_SERVICES=1). */
export function prometheusMissing(): string | false {
  if (existsSync(PROMETHEUS_PATH)) return false;
  const reason = 'Prometheus is not installed (apt install prometheus)';
  if (process.env.REQUIRE_SERVICES === '1') throw new Error(`REQUIRE_SERVICES=1: ${reason}`);
  process.stderr.write(`\n*** SKIPPED: ${reason} ***\n\n`);
  return reason;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Resolves once /-/ready answers 200; rejects if the process exits first (its port taken, a bad configuration). */
async function ready(child: ChildProcess, url: string, log: () => string): Promise<void> {
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`prometheus exited (${code}): ${log().slice(-600)}`))));
  // An exit after it was ready is stop()'s business, not an unhandled rejection.
  exited.catch(() => undefined);
  const deadline = Date.now() + READY_MS;
  for (;;) {
    const answer = await Promise.race([fetch(`${url}/-/ready`).then((r) => r.status, () => 0), exited]);
    if (answer === 200) return;
    if (Date.now() > deadline) throw new Error(`prometheus was not ready within ${READY_MS} ms: ${log().slice(-600)}`);
    await Promise.race([new Promise((r) => setTimeout(r, 100)), exited]);
  }
}

export async function startPrometheus(opts: { targets: string[]; token: string }): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [{ job_name: 'temp-inbox', authorization: { credentials: opts.token }, static_configs: [{ targets: opts.targets }] }],
    }),
  );
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let log = '';
    const child = spawn(PROMETHEUS_PATH, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    try {
      await ready(child, url, () => log);
    } catch (err) {
      await stopChild(child);
      if (attempt < BIND_TRIES && /address already in use/.test(log)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return {
      url,
      async labelValues(label, match) {
        const res = await fetch(`${url}/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`);
        return ((await res.json()) as { data: string[] }).data;
      },
      async query(expr) {
        const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
        return (await res.json()) as { status: string; data?: { resultType: string; result: unknown[] }; error?: string };
      },
      async stop() {
        await stopChild(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
