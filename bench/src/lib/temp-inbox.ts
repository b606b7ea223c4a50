// The server under test, as users run it: the built temp-inbox-server command of @temp-inbox/server
// in its own process, configured only through the environment.
import { join } from 'node:path';
import { loadConfig, signAddressToken } from '@temp-inbox/server';
import { makeTempDir, removeTempDir, runChild, startChild, waitForOutput, type Child } from './procs.js';
import { CHILDREN_DIR, SERVER_MAIN, SERVER_NODE_FLAGS } from './paths.js';

export interface TempInbox {
  child: Child;
  httpUrl: string;
  smtpPort: number;
  dataDir: string;
  stop(): Promise<void>;
}

export interface StartTempInboxOptions {
  /** A data directory to use (e.g. one seeded before start); a fresh one otherwise. */
  dataDir?: string;
  env?: Record<string, string>;
  name?: string;
  /** A module the server process loads first (node --import), e.g. a probe. */
  preload?: string;
}

/** Every bench server signs with this, so a bench can mint a JWT for a seeded address. */
export const BENCH_JWT_SECRET = 'bench-k7Qz3vN9xR2pL6tW8yB4mD1sF5hJ0cG';

/** A JWT for an address of a server started with benchEnv(). */
export function jwtFor(address: { id: number; address: string }): Promise<string> {
  return signAddressToken(BENCH_JWT_SECRET, address);
}

/** Every route of RATE_LIMIT_<ROUTE>, as the server's configuration names them. */
export const RATE_LIMIT_ROUTES: string[] = Object.keys(loadConfig({}).limits.routes);

/**
 * The limits a one-client load test must lift (docs/security.md "Limits"): per-client
 * limits off (a load generator is one client standing for many senders; the limits would
 * refuse it), everything else at its shipped default unless env says otherwise.
 */
export const BENCH_UNLIMITED: Record<string, string> = {
  ...Object.fromEntries(RATE_LIMIT_ROUTES.map((r) => [`RATE_LIMIT_${r}`, '0'])),
  SMTP_RATE_MESSAGES: '0',
  SMTP_RATE_RECIPIENTS: '0',
  SMTP_RATE_BYTES: '0',
  SMTP_MAX_CLIENTS_PER_IP: '10000',
  ADDRESS_MAX_MAILS: '0',
  ADDRESS_MAX_BYTES: '0',
};

export function benchEnv(): Record<string, string> {
  return {
    ...BENCH_UNLIMITED,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: '0',
    SMTP_HOSTNAME: 'mx.bench',
    JWT_SECRET: BENCH_JWT_SECRET,
    // The authentication checks run as shipped, but ask a local port where nothing listens
    // (each look-up refused at once) rather than the machine's resolvers: nothing leaves the
    // machine. auth-ingest.ts gives its servers a DNS server of its own.
    DNS_SERVERS: '127.0.0.1:1',
  };
}

export async function startTempInbox(opts: StartTempInboxOptions = {}): Promise<TempInbox> {
  const dataDir = opts.dataDir ?? makeTempDir('data');
  const args = opts.preload ? ['--import', opts.preload, SERVER_MAIN] : [SERVER_MAIN];
  const child = startChild({ name: opts.name ?? 'temp-inbox', args, nodeFlags: SERVER_NODE_FLAGS, env: { ...benchEnv(), DATA_DIR: dataDir, ...opts.env } });
  try {
    const m = await waitForOutput(child, /HTTP on (http:\/\/[^\s,]+), SMTP on port (\d+)/, 120_000);
    return {
      child,
      httpUrl: m[1]!,
      smtpPort: Number(m[2]),
      dataDir,
      async stop() {
        await child.stop();
        removeTempDir(dataDir);
      },
    };
  } catch (err) {
    await child.stop();
    removeTempDir(dataDir);
    throw err;
  }
}

/** Seeds a fresh data directory with `count` mails over `addresses` addresses (seed-00000@…); returns the directory. */
export interface Seeded {
  dataDir: string;
  seconds: number;
  /** The first seeded address (seed-00000@…), holding about count/addresses mails. */
  first: { id: number; address: string };
}

export async function seedDataDir(count: number, addresses: number): Promise<Seeded> {
  const dataDir = makeTempDir('data');
  const out = await runChild({ name: 'seed', tsx: true, args: [join(CHILDREN_DIR, 'seed.ts'), JSON.stringify({ dataDir, count, addresses })] }, 30 * 60_000);
  const m = /SEEDED (\{.*\})/.exec(out);
  if (!m) throw new Error(`seeding printed no result:\n${out.slice(-2000)}`);
  const r = JSON.parse(m[1]!) as { seconds: number; first: { id: number; address: string } };
  return { dataDir, seconds: r.seconds, first: r.first };
}

export const seedAddress = (k: number, domain: string) => `seed-${String(k).padStart(5, '0')}@${domain}`;
