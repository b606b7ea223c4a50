// Reads the event-loop delay of a server started with children/loop-delay.mjs preloaded
// (node --import): each read covers the time since the one before.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILDREN_DIR } from './paths.js';

/** The preload to give the server (StartTempInboxOptions.preload, or --import). */
export const LOOP_DELAY_PRELOAD = join(CHILDREN_DIR, 'loop-delay.mjs');

export interface LoopDelay {
  p99: number;
  max: number;
}

/** The delay (ms) on the server `pid`'s event loop since the last call; `file` is its LOOP_DELAY_FILE. */
export async function loopDelaySince(pid: number, file: string): Promise<LoopDelay> {
  const read = () => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as { seq: number; p99: number; max: number };
    } catch {
      return undefined; // not written yet, or caught mid-write
    }
  };
  const before = read()?.seq ?? 0;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 250; i++) {
    const r = read();
    if (r && r.seq > before) return { p99: r.p99, max: r.max };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the server did not report its event-loop delay');
}
