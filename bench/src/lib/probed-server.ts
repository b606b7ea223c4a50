// A bench server that reports its own event-loop delay (children/loop-delay.mjs), and the
// probes the hostile benches run beside it: /health_check polls and RSS samples.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { httpRequest } from './http.js';
import { CHILDREN_DIR } from './paths.js';
import { makeTempDir, memoryOf, sleep } from './procs.js';
import { percentile } from './stats.js';
import { startTempInbox, type TempInbox } from './temp-inbox.js';

const HEALTH_TIMEOUT_MS = 5000;

export interface ProbedServer extends TempInbox {
  delayFile: string;
}

export interface LoopDelay {
  p99: number;
  max: number;
  mean: number;
}

export async function startProbedServer(name: string, env: Record<string, string>): Promise<ProbedServer> {
  const dataDir = makeTempDir('data');
  const delayFile = join(dataDir, 'loop-delay.json');
  const server = await startTempInbox({ name, dataDir, preload: join(CHILDREN_DIR, 'loop-delay.mjs'), env: { LOOP_DELAY_FILE: delayFile, ...env } });
  return { ...server, delayFile };
}

function readDelay(file: string): (LoopDelay & { seq: number }) | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LoopDelay & { seq: number };
  } catch {
    return undefined; // not written yet, or caught mid-write
  }
}

/** Asks the server for its event-loop delay since the last ask (the preload then starts over). */
export async function loopDelay(server: ProbedServer): Promise<LoopDelay> {
  const before = readDelay(server.delayFile)?.seq ?? 0;
  process.kill(server.child.pid, 'SIGUSR2');
  const deadline = performance.now() + 5000;
  for (;;) {
    const r = readDelay(server.delayFile);
    if (r && r.seq > before) return { p99: r.p99, max: r.max, mean: r.mean };
    if (performance.now() > deadline) throw new Error(`the server did not report its event-loop delay:\n${server.child.tail()}`);
    await sleep(20);
  }
}

export interface HealthStats {
  max: number;
  p99: number;
  samples: number;
  failures: number;
}

/** Polls /health_check every 100 ms until stopped; a 5 s time-out counts as 5,000 ms and a failure. */
export function healthPoller(httpUrl: string) {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        httpRequest(`${httpUrl}/health_check`).then(
          (r) => r.status === 200,
          () => false,
        ),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      latencies.push(Math.min(performance.now() - t, HEALTH_TIMEOUT_MS));
      if (!ok) failures++;
      await sleep(100);
    }
  })();
  return {
    async stop(): Promise<HealthStats> {
      running = false;
      await done;
      return { max: latencies.length ? Math.max(...latencies) : NaN, p99: percentile(latencies, 99), samples: latencies.length, failures };
    },
  };
}

/** Samples a process's RSS every 100 ms until stopped; returns the highest. */
export function rssSampler(pid: number) {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, memoryOf(pid).rss);
    } catch {
      // the process has gone; the bench notices elsewhere
    }
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop(): number {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
