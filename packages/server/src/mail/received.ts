// The Received: trace line a delivering MTA prepends (RFC 5321 §4.4).
export interface ReceivedTrace {
  helo: string;
  remoteAddress: string;
  hostname: string;
  /** ESMTP, ESMTPS, SMTP… (RFC 3848 "with" protocol types). */
  protocol: string;
  id: string;
  recipient: string;
  date: Date;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** RFC 5322 §3.3 date-time in UTC. */
export function rfc5322Date(d: Date): string {
  return `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

/** Keeps client-supplied text from breaking the header: printable ASCII, no comment delimiters. */
function safe(s: string): string {
  return s.replace(/[^\x21-\x7e]|[()\\]/g, '').slice(0, 255) || 'unknown';
}

export function receivedHeader(t: ReceivedTrace): Buffer {
  const line =
    `Received: from ${safe(t.helo)} ([${safe(t.remoteAddress)}])\r\n` +
    `\tby ${safe(t.hostname)} (temp-inbox) with ${t.protocol} id ${safe(t.id)}\r\n` +
    `\tfor <${safe(t.recipient)}>; ${rfc5322Date(t.date)}\r\n`;
  return Buffer.from(line, 'latin1');
}
