// SQLITE_SYNCHRONOUS as the server runs it, seen from the system calls: the built
// service runs under strace, receives mail over SMTP one message after another,
// and the trace must show, for FULL, the WAL file synced between each message's
// 354 and its 250 (the mail is on disk before it is acknowledged), and for
// NORMAL, no such sync on the delivery path. The sync runs off the event loop
// (storage/sqlite/wal-sync.ts), so the trace also shows it on another thread. The
// messages come far enough apart for the checkpointing thread to empty the WAL
// between them, as on a quiet server: the sync of the new WAL's header must not be
// on the event loop's thread either (storage/sqlite/checkpoint-worker.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess } from '../helpers/process.js';
import { createAddress, DOMAIN, message, sendMail, tmp } from '../helpers/harness.js';

const strace = spawnSync('strace', ['-V'], { encoding: 'utf8' });
const straceMissing = strace.status === 0 ? false : 'strace is not installed (apt install strace)';
if (straceMissing && process.env.REQUIRE_SERVICES === '1') throw new Error(`wal-sync.test.ts needs strace under REQUIRE_SERVICES=1: ${straceMissing}`);
if (straceMissing) process.stderr.write(`\n!!!!! SKIPPED: wal-sync suite — ${straceMissing} !!!!!\n\n`);

const MAILS = 6;
/** Longer than the checkpointing thread's 250 ms round, so the WAL is emptied between messages. */
const PAUSE_MS = 400;

interface Traced {
  /** Trace lines: "<tid> <syscall>(...)". */
  lines: string[];
  mainPid: number;
}

/** Runs the service under strace, delivers MAILS messages one after another, stops it, returns the trace. */
async function traceDeliveries(synchronous: 'FULL' | 'NORMAL'): Promise<Traced> {
  const dir = tmp('temp-inbox-walsync-');
  const traceFile = join(dir, 'trace.txt');
  const service = await startProcess(
    { MAIL_DOMAINS: DOMAIN, DATA_DIR: join(dir, 'data'), SQLITE_SYNCHRONOUS: synchronous },
    ['strace', '-f', '-y', '-s', '48', '-e', 'trace=fdatasync,fsync,write,writev', '-o', traceFile],
  );
  const { child, exited, httpUrl, smtpPort } = service;
  try {
    assert.equal((await createAddress({ httpUrl }, { name: 'durable' })).address, `durable@${DOMAIN}`);
    for (let i = 0; i < MAILS; i++) {
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const r = await sendMail(smtpPort, { to: [`durable@${DOMAIN}`], message: message({ Subject: `durable ${i}` }, `body ${i}`) });
      assert.equal(r.code, 250, r.text);
    }
  } finally {
    // The traced service is the first process in the trace; stopping it ends strace too.
    const first = readFirstPid(traceFile);
    if (first) process.kill(first, 'SIGTERM');
    else child.kill('SIGKILL');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  const lines = readFileSync(traceFile, 'utf8').split('\n');
  // KEEP_TRACE=1 keeps the trace for a look (its path is printed).
  if (process.env.KEEP_TRACE) process.stderr.write(`trace kept: ${traceFile}\n`);
  else rmSync(dir, { recursive: true, force: true });
  return { lines, mainPid: Number(lines[0]!.split(' ')[0]) };
}

function readFirstPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split(' ', 1)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** For each delivery: the trace lines between the server's 354 and its 250 "Ok: stored". */
function deliveryWindows(lines: string[]): string[][] {
  const windows: string[][] = [];
  let open: string[] | undefined;
  for (const line of lines) {
    if (/ write(v)?\(\d+<socket:.*"354 /.test(line)) open = [];
    else if (open && / write(v)?\(\d+<socket:.*"250 .*Ok: stored/.test(line)) {
      windows.push(open);
      open = undefined;
    } else open?.push(line);
  }
  return windows;
}

/**
 * The WAL syncs that completed in `window`: written on one line, or, when another thread's
 * system call came in between, split by strace into `fdatasync(fd<…-wal> <unfinished ...>`
 * and, on the same thread, `<... fdatasync resumed>)          = 0` (strace pads a short line's
 * result to its column; each line starts with the thread id).
 */
function walSyncs(window: string[]): string[] {
  const whole = /^\d+ +fdatasync\(\d+<[^>]*temp-inbox\.sqlite-wal>\) += 0\b/;
  const begun = /^(\d+) +fdatasync\(\d+<[^>]*temp-inbox\.sqlite-wal> <unfinished \.\.\.>/;
  const pending = new Set<string>();
  const done: string[] = [];
  for (const line of window) {
    if (whole.test(line)) done.push(line);
    const start = begun.exec(line);
    if (start) pending.add(start[1]!);
    const resumed = /^(\d+) +<\.\.\. fdatasync resumed>\) += 0\b/.exec(line);
    if (resumed && pending.delete(resumed[1]!)) done.push(line);
  }
  return done;
}

/** Syncs of the WAL (whole or begun) made by the event loop's thread. */
function mainThreadWalSyncs(window: string[], mainPid: number): string[] {
  const sync = /^(\d+) +f(?:data)?sync\(\d+<[^>]*temp-inbox\.sqlite-wal>/;
  return window.filter((line) => Number(sync.exec(line)?.[1]) === mainPid);
}

/**
 * At most one delivery may have the event loop sync the WAL's header: when its commit
 * falls between the checkpointing thread's checkpoint and that thread's restart of the
 * WAL (microseconds), it starts the WAL itself, as SQLite would.
 */
function assertHeaderSyncsOffTheLoop(windows: string[][], mainPid: number): void {
  const onLoop = windows.map((w) => mainThreadWalSyncs(w, mainPid)).filter((s) => s.length > 0);
  assert.ok(onLoop.length <= 1, `${onLoop.length} of ${windows.length} deliveries synced the WAL on the event loop's thread:\n${onLoop.flat().join('\n')}`);
}

describe('SQLITE_SYNCHRONOUS, seen in the system calls', { skip: straceMissing, timeout: 120_000 }, () => {
  it('FULL: the WAL is synced, off the event loop, between every message and its 250', async () => {
    const { lines, mainPid } = await traceDeliveries('FULL');
    const windows = deliveryWindows(lines);
    assert.equal(windows.length, MAILS, 'every delivery found in the trace');
    windows.forEach((w, i) => {
      const syncs = walSyncs(w);
      assert.ok(syncs.length >= 1, `message ${i}: no WAL sync before its 250; the trace between its 354 and 250:\n${w.join('\n')}`);
      for (const s of syncs) assert.notEqual(Number(s.split(' ')[0]), mainPid, `message ${i}: synced on the event loop's thread: ${s}`);
    });
    assertHeaderSyncsOffTheLoop(windows, mainPid);
  });

  it('NORMAL: no WAL sync on the delivery path', async () => {
    const { lines, mainPid } = await traceDeliveries('NORMAL');
    const windows = deliveryWindows(lines);
    assert.equal(windows.length, MAILS, 'every delivery found in the trace');
    // The checkpointing thread syncs the WAL before it checkpoints (every 250 ms at most):
    // one delivery may happen to span one. A sync per delivery is what FULL would do.
    const withSync = windows.filter((w) => walSyncs(w).length > 0).length;
    assert.ok(withSync <= 1, `${withSync} of ${MAILS} deliveries had a WAL sync before their 250`);
    assertHeaderSyncsOffTheLoop(windows, mainPid);
  });
});
