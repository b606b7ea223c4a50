// 11. Reports on arrival (docs/decisions.md "Deliverability report"): SMTP ingest with
// SPAM_SCANNER set against the same server without it, side by side in one run. With a
// scanner every mail's report is built after its 250 (a parse, the HTML check in the report
// thread, a scan), so the 250s are not held up, but those reports take CPU from the same
// cores. Each round with the scanner waits, after its last 250, until the server and the
// scanner are idle again (the reports of the round done), and its CPU counts to then.
// Reported: the rates and their ratio (median of rounds, each round's two run back to
// back), the server's CPU per mail both ways, the scanner's CPU per mail, and how long the
// reports took to catch up after the last 250 (the CPU counted until then). A round is a
// number of messages (2,000; quick 400), not a time, so that its reports fit the queue of
// those waiting (10,000) and each is built; the newest mail of each address is read back
// to check it has its summary.
// The scanner is Debian's rspamd (lib/rspamd.ts), configured as the report's tests run it.
//
//   node --import tsx bench/src/run.ts --only=report-ingest [--quick]
import { readdirSync, readFileSync } from 'node:fs';
import { createAddress, getJson } from './lib/http.js';
import { interleave } from './lib/load.js';
import { messageTemplate } from './lib/messages.js';
import { cpuSecondsOf, sleep } from './lib/procs.js';
import type { Bench, Row } from './lib/report.js';
import { blast, type BlastResult } from './lib/smtp-client.js';
import { fmt, median, round } from './lib/stats.js';
import { startTempInbox, type TempInbox } from './lib/temp-inbox.js';
import { CONNECTIONS, MESSAGE_BYTES } from './smtp-ingest.js';
import { rspamdInstalled, startRspamd, type Rspamd } from './lib/rspamd.js';

/** CPU seconds of every process in a process group (the scanner and its workers), from /proc. */
function groupCpuSeconds(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces): state is the first, pgrp the third.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

interface Round extends BlastResult {
  /** Server CPU ms per mail, until its reports were done. */
  serverMsPerMail: number;
  /** Scanner CPU ms per mail (0 without one). */
  scannerMsPerMail: number;
  /** Seconds from the last 250 until the server and the scanner were idle. */
  catchUp: number;
}

/** Waits until the server and the scanner each use under 5 % of a core over 300 ms (at most `maxMs`); resolves to the seconds waited. */
async function untilIdle(server: number, scannerGroup: number | undefined, maxMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const [s0, g0] = [cpuSecondsOf(server), scannerGroup ? groupCpuSeconds(scannerGroup) : 0];
    await sleep(300);
    const [s1, g1] = [cpuSecondsOf(server), scannerGroup ? groupCpuSeconds(scannerGroup) : 0];
    if ((s1 - s0 < 0.015 && g1 - g0 < 0.015) || performance.now() - t0 > maxMs) return (performance.now() - t0) / 1000;
  }
}

export const reportIngest: Bench = async (ctx) => {
  // A number of messages a round rather than a time: every round's reports must fit the 10,000 that may wait, so that each is built.
  const p = ctx.quick ? { messages: 400, warmup: 300, rounds: 1, catchUpMs: 60_000 } : { messages: 2000, warmup: 1000, rounds: 3, catchUpMs: 180_000 };
  const kind = 'rspamd';
  if (!rspamdInstalled()) {
    const row: Row = { bench: 'report-ingest', measure: 'SMTP ingest, scanner on and off', ours: '-', baseline: '-', result: 'rspamd is not installed (apt install rspamd)', target: '(none)', verdict: 'not measured', values: {} };
    return { rows: [row], details: {} };
  }
  let scanner: Rspamd | undefined;
  let on: TempInbox | undefined;
  let off: TempInbox | undefined;
  try {
    ctx.log(`starting ${kind}`);
    const t = performance.now();
    scanner = await startRspamd();
    ctx.log(`${kind} answers after ${fmt((performance.now() - t) / 1000, 1)} s`);
    on = await startTempInbox({ name: 'temp-inbox-scanner-on', env: { SPAM_SCANNER: scanner.url } });
    off = await startTempInbox({ name: 'temp-inbox-scanner-off' });
    const onAddresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(on!.httpUrl)));
    const offAddresses = await Promise.all(Array.from({ length: CONNECTIONS }, () => createAddress(off!.httpUrl)));
    const template = messageTemplate(MESSAGE_BYTES, `report${Date.now()}`);
    let offset = 0;
    const run = (server: TempInbox, addresses: { address: string }[], group: number | undefined, messages: number) => async (): Promise<Round> => {
      const c0 = cpuSecondsOf(server.child.pid);
      const g0 = group ? groupCpuSeconds(group) : 0;
      const r = await blast({ port: server.smtpPort, connections: CONNECTIONS, messages, offset, recipient: (_i, c) => addresses[c]!.address, message: template });
      offset += r.messages;
      // Without a scanner nothing is left to do after the last 250; with one, its reports are.
      const catchUp = group ? await untilIdle(server.child.pid, group, p.catchUpMs) : 0;
      const serverMs = (cpuSecondsOf(server.child.pid) - c0) * 1000;
      const scannerMs = group ? (groupCpuSeconds(group) - g0) * 1000 : 0;
      return { ...r, serverMsPerMail: round(serverMs / r.messages, 3), scannerMsPerMail: round(scannerMs / r.messages, 3), catchUp: round(catchUp, 1) };
    };
    const [withScanner, without, group] = [on, off, scanner.pid];
    const subjects = (messages: number) => ({
      'scanner on': run(withScanner, onAddresses, group, messages),
      'scanner off': run(without, offAddresses, undefined, messages),
    });
    ctx.log(`warm-up (${p.warmup} messages each)`);
    for (const fn of Object.values(subjects(p.warmup))) await fn();
    const samples = await interleave(p.rounds, subjects(p.messages), (m) => ctx.log(m));
    // The newest mail of each address with the scanner: its parsed view carries the summary once its report was built.
    let summarised = 0;
    for (const a of onAddresses) {
      const list = await getJson<{ results: { uuid: string }[] }>(`${on.httpUrl}/api/mails?limit=1&offset=0`, a.jwt);
      const uuid = list.results[0]?.uuid;
      const parsed = uuid ? await getJson<{ report?: { spam: string; spam_score: number | null } }>(`${on.httpUrl}/api/mail/${uuid}/parsed`, a.jwt) : undefined;
      if (parsed?.report && parsed.report.spam !== 'unavailable') summarised++;
    }
    ctx.log(`newest mail of each address with a summary scored by ${kind}: ${summarised} of ${onAddresses.length}`);
    const of = (name: string, pick: (r: Round) => number) => median((samples[name] ?? []).map(pick));
    const ratio = median((samples['scanner on'] ?? []).map((s, i) => s.rate / samples['scanner off']![i]!.rate));
    const row: Row = {
      bench: 'report-ingest',
      measure: `${fmt(MESSAGE_BYTES / 1024, 1)} KB HTML msgs, ${CONNECTIONS} conns, SPAM_SCANNER=${kind} (a report per mail after its 250) vs unset`,
      ours: `${fmt(of('scanner on', (r) => r.rate))} msg/s, ${fmt(of('scanner on', (r) => r.serverMsPerMail), 2)} ms CPU/mail + ${fmt(of('scanner on', (r) => r.scannerMsPerMail), 2)} ms ${kind}`,
      baseline: `${fmt(of('scanner off', (r) => r.rate))} msg/s, ${fmt(of('scanner off', (r) => r.serverMsPerMail), 2)} ms CPU/mail`,
      result: `ratio ${fmt(ratio)}; reports done ${fmt(of('scanner on', (r) => r.catchUp), 1)} s after the last 250`,
      target: '(none)',
      verdict: 'info',
      values: {
        ours: round(of('scanner on', (r) => r.rate)),
        baseline: round(of('scanner off', (r) => r.rate)),
        ratio: round(ratio, 3),
        oursCpuMsPerMail: of('scanner on', (r) => r.serverMsPerMail),
        baselineCpuMsPerMail: of('scanner off', (r) => r.serverMsPerMail),
        scannerCpuMsPerMail: of('scanner on', (r) => r.scannerMsPerMail),
        catchUpSeconds: of('scanner on', (r) => r.catchUp),
        summarised,
      },
    };
    return { rows: [row], details: { params: { ...p, scanner: kind, connections: CONNECTIONS, messageBytes: MESSAGE_BYTES }, summarised, samples } };
  } finally {
    await off?.stop();
    await on?.stop();
    await scanner?.close();
  }
};
