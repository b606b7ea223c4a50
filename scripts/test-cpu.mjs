// Loaded into each test file's process by scripts/test-batch.mjs when TEST_CPU_LOG names a
// file: at exit it appends the file's wall time and the CPU it and the processes it started
// (and waited for) used, from /proc (Linux only; elsewhere nothing is written). The batch
// prints the slowest files with both, which tells a file that computes from one that waits.
import { appendFileSync, readFileSync } from 'node:fs';

const log = process.env.TEST_CPU_LOG;
const file = process.argv[1];
if (log && /\.test\.[jt]s$/.test(file ?? '')) {
  process.on('exit', () => {
    try {
      // /proc/self/stat fields 14-17 (1-based): utime, stime, cutime, cstime in clock ticks.
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
      appendFileSync(log, `${JSON.stringify({ file, cpu: ticks / 100, wall: process.uptime() })}\n`);
    } catch {
      // Not Linux, or /proc unreadable: no figure for this file.
    }
  });
}
