// The machine a run happened on, recorded with every result file.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { ROOT } from './paths.js';

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/**
 * A fingerprint of the built packages (api and server dist). Others may rebuild it while a
 * long run is going; servers started after that would run other code, so the run
 * compares the fingerprint at its start and its end.
 */
export function buildFingerprint(): string {
  const hash = createHash('sha1');
  for (const pkg of ['api', 'server']) {
    const dir = join(ROOT, 'packages', pkg, 'dist');
    let files: string[] = [];
    try {
      files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.js')).sort();
    } catch {
      /* not built */
    }
    for (const f of files) hash.update(f).update(readFileSync(join(dir, f)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function machineInfo() {
  let cpuModel = cpus()[0]?.model ?? '';
  try {
    cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    /* not Linux */
  }
  return {
    cpuModel,
    nproc: availableParallelism(),
    totalMemoryBytes: totalmem(),
    free: sh('free', ['-h']),
    os: `${osType()} ${release()}`,
    node: process.version,
    loadavgAtStart: loadavg(),
    git: { commit: sh('git', ['rev-parse', 'HEAD']), dirty: sh('git', ['status', '--porcelain']) !== '' },
  };
}
