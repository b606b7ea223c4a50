// A bench file run by itself (`node --import tsx bench/src/<file>.ts [--quick]`) rather than
// through run.ts: its rows printed as a table, a crash reported with exit code 1, and
// whatever it started stopped before the process exits.
import { removeAllTempDirs, stopAllChildren } from './procs.js';
import { table, type Row } from './report.js';

/** True when `moduleUrl` (the caller's import.meta.url) is the file node was started with. */
export const isMain = (moduleUrl: string): boolean => moduleUrl === `file://${process.argv[1]}`;

export async function runAlone(name: string, bench: (quick: boolean, log: (m: string) => void) => Promise<{ rows: Row[] }>): Promise<never> {
  try {
    const out = await bench(process.argv.includes('--quick'), (m) => process.stdout.write(`${name}: ${m}\n`));
    process.stdout.write(`\n${table(out.rows)}\n`);
  } catch (err) {
    process.stderr.write(`${name}: CRASHED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await stopAllChildren();
    removeAllTempDirs();
  }
  // Keep-alive sockets to a stopped server must not hold the process open.
  process.exit(process.exitCode ?? 0);
}
