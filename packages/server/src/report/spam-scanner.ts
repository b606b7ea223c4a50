// The spam score from a real scanner (docs/api.md "Deliverability report"): rspamd over its
// HTTP protocol (POST /checkv2) or SpamAssassin's spamd over its own (REPORT SPAMC/1.5),
// chosen by SPAM_SCANNER. The scanner's address is the operator's, not a user's. Every
// exchange has a deadline and reads a bounded answer; a scanner that is down or slow
// makes the section `unavailable`, never a failed request.
import { request } from 'node:http';
import { connect } from 'node:net';
import type { SpamRule, SpamSection } from '@temp-inbox/api';
import type { ScannerTarget } from '../domain/spam-scanner-url.js';

export { parseScanner, type ScannerTarget } from '../domain/spam-scanner-url.js';

export interface ScanOptions {
  timeoutMs: number;
  /** Larger messages are not sent (the section says so). */
  maxBytes: number;
  /** The SMTP client and envelope as the mail arrived, for the scanner's own checks. */
  envelope?: { ip?: string; helo?: string; from?: string; rcpt?: string };
}

/** The most of a scanner's answer that is read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

const unavailable = (kind: ScannerTarget['kind'] | null, reason: string): SpamSection => ({ verdict: 'unavailable', reason, findings: [], scanner: kind, score: null, threshold: null, rules: [] });

/** rspamd's actions past which a mail is filed as spam or refused, and the one that only delays it. */
const RSPAMD_SPAM_ACTIONS = new Set(['add header', 'rewrite subject', 'soft reject', 'reject']);

function scored(kind: ScannerTarget['kind'], score: number, threshold: number, rules: SpamRule[], action?: string): SpamSection {
  const verdict =
    action !== undefined ? (RSPAMD_SPAM_ACTIONS.has(action) ? 'fail' : action === 'greylist' ? 'warn' : 'pass') : score >= threshold ? 'fail' : score >= threshold / 2 ? 'warn' : 'pass';
  const message =
    (verdict === 'fail' ? `Scored ${score} against ${kind}'s spam threshold of ${threshold}: it would be filed as spam` : `Scored ${score} against ${kind}'s spam threshold of ${threshold}`) +
    (action !== undefined ? ` (rspamd's action: ${action}).` : '.');
  rules.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  return { verdict, findings: [{ rule: 'spam-score', verdict, message }], scanner: kind, score, threshold, rules: rules.slice(0, 200) };
}

interface RspamdAnswer {
  score?: number;
  required_score?: number;
  action?: string;
  symbols?: Record<string, { name?: string; score?: number; description?: string }>;
}

function rspamd(target: ScannerTarget, raw: Buffer, opts: ScanOptions): Promise<SpamSection> {
  return new Promise((resolve) => {
    const env = opts.envelope ?? {};
    const headers: Record<string, string> = { 'content-length': String(raw.length) };
    if (env.ip) headers['IP'] = env.ip;
    if (env.helo) headers['Helo'] = env.helo;
    if (env.from) headers['From'] = env.from;
    if (env.rcpt) headers['Rcpt'] = env.rcpt;
    let done = false;
    const finish = (s: SpamSection) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(s);
    };
    const req = request({ host: target.host, port: target.port, method: 'POST', path: '/checkv2', headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) return finish(unavailable('rspamd', 'rspamd answered more than 1 MiB.'));
        chunks.push(c);
      });
      res.on('error', () => finish(unavailable('rspamd', 'rspamd closed the connection before answering.')));
      res.on('end', () => {
        if (res.statusCode !== 200) return finish(unavailable('rspamd', `rspamd answered ${res.statusCode}.`));
        try {
          const a = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RspamdAnswer;
          const threshold = a.required_score;
          if (typeof a.score !== 'number' || typeof threshold !== 'number') return finish(unavailable('rspamd', 'rspamd answered without a score.'));
          const rules = Object.entries(a.symbols ?? {}).map(([name, s]) => ({ name: s.name ?? name, score: Number(s.score ?? 0), description: String(s.description ?? '') }));
          finish(scored('rspamd', Math.round(a.score * 100) / 100, threshold, rules, typeof a.action === 'string' ? a.action : 'no action'));
        } catch {
          finish(unavailable('rspamd', 'rspamd answered something other than JSON.'));
        }
      });
    });
    const timer = setTimeout(() => finish(unavailable('rspamd', `rspamd did not answer within ${opts.timeoutMs / 1000} s.`)), opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish(unavailable('rspamd', `rspamd at ${target.host}:${target.port} could not be reached (${err.code ?? 'error'}).`)));
    req.end(raw);
  });
}

/** The rules of a spamd REPORT: "pts rule description" lines, continuation lines indented under the description. */
export function spamdRules(report: string): SpamRule[] {
  const rules: SpamRule[] = [];
  let inTable = false;
  for (const line of report.split(/\r?\n/)) {
    if (/^-{3,}\s+-{3,}/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    const m = /^\s*(-?\d+(?:\.\d+)?)\s+([A-Z0-9_]+)\s+(.*)$/.exec(line);
    if (m) rules.push({ name: m[2]!, score: Number(m[1]), description: m[3]!.trim() });
    else if (/^\s{10,}\S/.test(line) && rules.length > 0) rules[rules.length - 1]!.description += ` ${line.trim()}`;
    else if (line.trim() === '') inTable = rules.length === 0;
  }
  return rules;
}

function spamd(target: ScannerTarget, raw: Buffer, opts: ScanOptions): Promise<SpamSection> {
  return new Promise((resolve) => {
    let done = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (s: SpamSection) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(s);
    };
    const socket = connect({ host: target.host, port: target.port });
    const timer = setTimeout(() => finish(unavailable('spamd', `spamd did not answer within ${opts.timeoutMs / 1000} s.`)), opts.timeoutMs);
    socket.on('error', (err: NodeJS.ErrnoException) => finish(unavailable('spamd', `spamd at ${target.host}:${target.port} could not be reached (${err.code ?? 'error'}).`)));
    socket.on('connect', () => {
      socket.write(`REPORT SPAMC/1.5\r\nContent-length: ${raw.length}\r\nUser: temp-inbox\r\n\r\n`);
      socket.end(raw);
    });
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_ANSWER_BYTES) return finish(unavailable('spamd', 'spamd answered more than 1 MiB.'));
      chunks.push(c);
    });
    socket.on('end', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const status = /^SPAMD\/[\d.]+\s+(\d+)\s+(.*)/.exec(answer);
      if (!status) return finish(unavailable('spamd', 'spamd answered something other than its protocol.'));
      if (status[1] !== '0') return finish(unavailable('spamd', `spamd refused the scan (${status[1]} ${status[2]!.trim()}).`));
      const spam = /^Spam:\s*\w+\s*;\s*(-?\d+(?:\.\d+)?)\s*\/\s*(-?\d+(?:\.\d+)?)/im.exec(answer);
      if (!spam) return finish(unavailable('spamd', 'spamd answered without a score.'));
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      finish(scored('spamd', Number(spam[1]), Number(spam[2]), spamdRules(body)));
    });
  });
}

export async function scanMessage(target: ScannerTarget | null, raw: Buffer, opts: ScanOptions): Promise<SpamSection> {
  if (!target) return unavailable(null, 'No spam scanner is configured (SPAM_SCANNER).');
  if (raw.length > opts.maxBytes) return unavailable(target.kind, `The mail is larger than SPAM_SCANNER_MAX_BYTES (${opts.maxBytes} bytes) and was not scanned.`);
  return target.kind === 'rspamd' ? rspamd(target, raw, opts) : spamd(target, raw, opts);
}
