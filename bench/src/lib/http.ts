// A keep-alive HTTP client for setup steps and latency probes (autocannon does the throughput runs).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** performance.now() when the whole body had arrived. */
  at: number;
}

export function httpRequest(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), at: performance.now() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`HTTP timeout: ${url}`)));
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export async function getJson<T = unknown>(url: string, jwt?: string): Promise<T> {
  const res = await httpRequest(url, { headers: jwt ? { authorization: `Bearer ${jwt}` } : {} });
  if (res.status !== 200) throw new Error(`GET ${url} -> ${res.status} ${res.body.toString().slice(0, 200)}`);
  return JSON.parse(res.body.toString('utf8')) as T;
}

export async function createAddress(httpUrl: string, name?: string): Promise<{ address: string; jwt: string }> {
  const res = await httpRequest(`${httpUrl}/api/new_address`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(name ? { name } : {}),
  });
  if (res.status !== 200) throw new Error(`new_address -> ${res.status} ${res.body.toString().slice(0, 200)}`);
  return JSON.parse(res.body.toString('utf8')) as { address: string; jwt: string };
}

/** Sequential GETs for `seconds`; returns each request's latency in milliseconds. */
export async function sequentialLatencies(url: string, headers: Record<string, string>, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await httpRequest(url, { headers });
    if (res.status !== 200) throw new Error(`GET ${url} -> ${res.status}`);
    out.push(res.at - t0);
  }
  return out;
}
