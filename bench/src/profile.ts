// Not a bench: runs the built server under one of the bench loads with
// --cpu-prof and prints where its CPU time went (self time by package and by
// function). The .cpuprofile opens in Chrome DevTools (Performance tab).
// `threads` runs the SMTP load without the profiler and prints each thread's CPU
// per mail instead (the main thread, the parser's and the checks' workers, V8's
// helper threads for the collector and the compiler, libuv's pool for the WAL sync),
// and the event loop's delay on the server's thread during the load. CONNS=n in the
// environment sends over n connections instead of the ingest bench's 10.
//
//   node --import tsx bench/src/profile.ts smtp|list|mail|threads [seconds] [LOG_LEVEL] [NAME=value ...]
//
// NAME=value pairs are added to the server's environment (e.g. AUTH_CHECKS=off).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createAddress, getJson } from './lib/http.js';
import { httpLoad } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { SERVER_MAIN, SERVER_NODE_FLAGS, ROOT } from './lib/paths.js';
import { cpuSecondsByThread, makeTempDir, removeAllTempDirs, startChild, stopAllChildren, waitForOutput } from './lib/procs.js';
import { blast } from './lib/smtp-client.js';
import { LOOP_DELAY_PRELOAD, loopDelaySince } from './lib/loop-delay.js';
import { benchEnv } from './lib/temp-inbox.js';

const [mode = 'smtp', secondsArg = '8', level = 'info', ...settings] = process.argv.slice(2);
if (!['smtp', 'list', 'mail', 'threads'].includes(mode)) {
  process.stderr.write('usage: profile.ts smtp|list|mail|threads [seconds] [LOG_LEVEL] [NAME=value ...]\n');
  process.exit(2);
}
const seconds = Number(secondsArg);
const profDir = join(tmpdir(), 'temp-inbox-profiles');
mkdirSync(profDir, { recursive: true });
const before = new Set(readdirSync(profDir));

const byThread = mode === 'threads';
const dataDir = makeTempDir('data');
// loop-delay.mjs writes the event loop's delay since the last SIGUSR2 to this file.
const delayFile = join(dataDir, 'loop-delay.json');
const child = startChild({
  name: 'profiled',
  args: [SERVER_MAIN],
  nodeFlags: byThread ? [...SERVER_NODE_FLAGS, '--import', LOOP_DELAY_PRELOAD] : [...SERVER_NODE_FLAGS, '--cpu-prof', `--cpu-prof-dir=${profDir}`],
  env: {
    ...benchEnv(),
    DATA_DIR: dataDir,
    LOG_LEVEL: level,
    LOOP_DELAY_FILE: delayFile,
    ...Object.fromEntries(settings.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
  },
});

/** The event loop's delay since the last call (the preload starts over on each). */
const loopDelay = () => loopDelaySince(child.pid, delayFile);
try {
  const m = await waitForOutput(child, /HTTP on (http:\/\/[^\s,]+), SMTP on port (\d+)/);
  const [httpUrl, smtpPort] = [m[1]!, Number(m[2])];
  const inboxes = await Promise.all(Array.from({ length: 10 }, () => createAddress(httpUrl)));
  const tmpl = messageTemplate(3 * 1024, `prof${Date.now()}`);
  if (mode === 'smtp') {
    const r = await blast({ port: smtpPort, connections: 10, seconds, recipient: (_i, c) => inboxes[c]!.address, message: tmpl });
    process.stdout.write(`${r.messages} messages, ${r.rate.toFixed(0)} msg/s\n`);
  } else if (byThread) {
    // Warmed up first, so that start-up and the first compilations are not counted.
    await blast({ port: smtpPort, connections: 10, seconds: 2, recipient: (_i, c) => inboxes[c]!.address, message: tmpl });
    const before = cpuSecondsByThread(child.pid);
    const ownBefore = process.cpuUsage();
    await loopDelay();
    const r = await blast({ port: smtpPort, connections: Number(process.env['CONNS'] ?? 10), seconds, offset: 1e6, recipient: (_i, c) => inboxes[c % 10]!.address, message: tmpl });
    const delay = await loopDelay();
    const after = cpuSecondsByThread(child.pid);
    const own = process.cpuUsage(ownBefore);
    const rows = [...after].map(([tid, s]) => [tid, s - (before.get(tid) ?? 0)] as const).filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
    const perMail = (s: number) => `${((s * 1e6) / r.messages).toFixed(0).padStart(5)} µs a mail`;
    process.stdout.write(`${r.messages} messages, ${r.rate.toFixed(0)} msg/s\n`);
    for (const [tid, s] of rows) process.stdout.write(`${perMail(s)}  thread ${tid}${tid === child.pid ? ' (main)' : ''}\n`);
    process.stdout.write(`${perMail(rows.reduce((n, [, s]) => n + s, 0))}  in all\n`);
    process.stdout.write(`${perMail((own.user + own.system) / 1e6)}  the load generator (this process)\n`);
    process.stdout.write(`event-loop delay during the load: p99 ${delay.p99.toFixed(1)} ms, max ${delay.max.toFixed(1)} ms\n`);
  } else {
    await blast({ port: smtpPort, connections: 1, messages: 20, recipient: () => inboxes[0]!.address, message: tmpl });
    const list = await getJson<{ results: { uuid: string }[] }>(`${httpUrl}/api/mails?limit=20&offset=0`, inboxes[0]!.jwt);
    const path = mode === 'list' ? '/api/mails?limit=20&offset=0' : `/api/mail/${list.results[10]!.uuid}`;
    const r = await httpLoad(httpUrl + path, { connections: 50, seconds, headers: { authorization: `Bearer ${inboxes[0]!.jwt}` } });
    process.stdout.write(`${r.requests} requests, ${r.rps.toFixed(0)} req/s\n`);
  }
} finally {
  await stopAllChildren();
  removeAllTempDirs();
}

if (byThread) process.exit(0);
const file = readdirSync(profDir).find((f) => !before.has(f) && f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const where = (url: string) => {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + 13).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return path.startsWith('/') ? relative(ROOT, path) : path || '(native)';
};
const add = (map: Map<string, number>, k: string, v: number) => map.set(k, (map.get(k) ?? 0) + v);
const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  add(byPackage, where(n.callFrame.url), t);
  add(byFunction, `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`, t);
}
const top = (map: Map<string, number>, n: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
process.stdout.write(`\nprofile: ${join(profDir, file)}\n\nself time by package or file:\n${top(byPackage, 15)}\n\nself time by function:\n${top(byFunction, 25)}\n`);
