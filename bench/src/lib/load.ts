// Load generation helpers shared by the benches.
import autocannon from 'autocannon';

export interface HttpLoad {
  /** Mean requests per second over the run. */
  rps: number;
  latencyP50: number;
  latencyP99: number;
  requests: number;
}

/** autocannon against one URL; any error, timeout or non-2xx answer makes the run fail. */
export async function httpLoad(url: string, opts: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<HttpLoad> {
  const r = await autocannon({ url, connections: opts.connections, duration: opts.seconds, headers: opts.headers ?? {} });
  if (r.errors || r.timeouts || r.non2xx) {
    throw new Error(`autocannon ${url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx of ${r.requests.total}`);
  }
  return { rps: r.requests.average, latencyP50: r.latency.p50, latencyP99: r.latency.p99, requests: r.requests.total };
}

/**
 * Runs each named measurement `rounds` times, alternating (A, B, A, B, …), so that
 * noise from other tenants of the machine falls on all of them alike.
 */
export async function interleave<T>(rounds: number, subjects: Record<string, () => Promise<T>>, log?: (m: string) => void): Promise<Record<string, T[]>> {
  const out: Record<string, T[]> = Object.fromEntries(Object.keys(subjects).map((k) => [k, [] as T[]]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(subjects)) {
      const v = await fn();
      out[name]!.push(v);
      log?.(`  round ${r + 1}/${rounds} ${name}: ${JSON.stringify(v)}`);
    }
  }
  return out;
}
