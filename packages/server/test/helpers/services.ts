// External services for the suites that need them (PostgreSQL, Redis, Chromium). A suite
// asks skipUnless() (or serviceAvailable()) before registering its tests: a missing
// service registers them as skipped, with the reason, and a loud warning; when
// REQUIRE_SERVICES=1 (CI) it throws instead, so the test file fails.
// Both answer synchronously, so that a test file needs no top-level await (a file without
// one can share a process with others: docs/architecture.md "Running the suite"). The
// answers come from TEST_SERVICES, which scripts/test.mjs fills once for a whole run with
// probe-services.mjs, or else from that script run here as a child process, once a process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defaultPgUser, where } from './probe-services.mjs';

export { CHROMIUM_PATH, PG_URL, REDIS_URL } from './probe-services.mjs';

export type ServiceName = 'postgres' | 'redis' | 'chromium';

defaultPgUser();

const LABEL: Record<ServiceName, string> = { postgres: 'PostgreSQL', redis: 'Redis', chromium: 'Chromium' };
const PROBE = fileURLToPath(new URL('./probe-services.mjs', import.meta.url));

/** Why each service is missing (null: it answers), for every service probed so far. */
function answers(): Record<string, string | null> {
  const known = process.env.TEST_SERVICES ? (JSON.parse(process.env.TEST_SERVICES) as Record<string, string | null>) : {};
  if (['postgres', 'redis', 'chromium'].every((n) => n in known)) return known;
  const probed = spawnSync(process.execPath, [PROBE], { encoding: 'utf8', timeout: 30_000 });
  if (probed.status !== 0) throw new Error(`probe-services.mjs failed: ${probed.error?.message ?? probed.stderr.trim()}`);
  // Kept in the environment: this process asks once, and the processes it starts inherit it.
  process.env.TEST_SERVICES = probed.stdout.trim();
  return JSON.parse(process.env.TEST_SERVICES) as Record<string, string | null>;
}

const warned = new Set<ServiceName>();

/** Why the service is missing, or undefined when it answers; throws when REQUIRE_SERVICES=1 and it is missing. */
function missing(name: ServiceName): string | undefined {
  const reason = answers()[name];
  if (reason === null || reason === undefined) return undefined;
  const at = where(name);
  if (process.env.REQUIRE_SERVICES === '1') throw new Error(`${name} is required (REQUIRE_SERVICES=1) but not available at ${at}: ${reason}`);
  if (!warned.has(name)) {
    warned.add(name);
    process.stderr.write(`\n!!!!! SKIPPED: ${name} suites — no ${name} at ${at} (${reason}) (set REQUIRE_SERVICES=1 to make this a failure) !!!!!\n\n`);
  }
  return `${LABEL[name]} not ${name === 'chromium' ? 'found' : 'reachable'} at ${at}: ${reason}`;
}

/**
 * Whether the service answers. When it does not: throws if REQUIRE_SERVICES=1,
 * otherwise prints a loud SKIPPED line to stderr and returns false.
 */
export function serviceAvailable(name: ServiceName): boolean {
  return missing(name) === undefined;
}

/**
 * false when every service named answers; otherwise the reason the first missing one
 * gives, for node:test's `{ skip: reason }` ("PostgreSQL not reachable at …: …").
 * Throws when REQUIRE_SERVICES=1 and one is missing, as serviceAvailable does.
 */
export function skipUnless(...names: ServiceName[]): string | false {
  for (const name of names) {
    const reason = missing(name);
    if (reason !== undefined) return reason;
  }
  return false;
}
