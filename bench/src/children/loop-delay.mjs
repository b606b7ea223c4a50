// Preloaded into a server under test (node --import): on SIGUSR2 it writes the
// event-loop delay seen since the last signal (p99, max, mean in ms) as JSON to
// LOOP_DELAY_FILE, then starts over. Plain JavaScript so the built server needs no loader.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.LOOP_DELAY_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  let seq = 0;
  process.on('SIGUSR2', () => {
    const ms = (ns) => ns / 1e6;
    writeFileSync(file, JSON.stringify({ seq: ++seq, p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean), count: h.count }));
    h.reset();
  });
}
