// Numbers, dates and relative times in the browser's locale (Intl, with the languages
// the browser prefers: navigator.languages), never written by hand. The page's words
// are in strings.ts; how they are put together with these is up to it.

const LOCALES = typeof navigator === 'undefined' ? [] : [...navigator.languages];

const integer = new Intl.NumberFormat(LOCALES);
const byteUnits = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
const rtf = new Intl.RelativeTimeFormat(LOCALES, { numeric: 'auto' });
const time = new Intl.DateTimeFormat(LOCALES, { timeStyle: 'short' });
const dateTime = new Intl.DateTimeFormat(LOCALES, { dateStyle: 'medium', timeStyle: 'short' });
const full = new Intl.DateTimeFormat(LOCALES, { dateStyle: 'medium', timeStyle: 'long' });

/** A count ("1,234" or "1.234"), with `fraction` digits after the point. */
export function count(n: number, fraction = 0): string {
  return fraction === 0 ? integer.format(n) : new Intl.NumberFormat(LOCALES, { minimumFractionDigits: fraction, maximumFractionDigits: fraction }).format(n);
}

/** A percentage given as 0–100 ("87.5 %" or "87,5 %"), with at most one decimal. */
export function percent(n: number): string {
  return new Intl.NumberFormat(LOCALES, { style: 'percent', maximumFractionDigits: 1 }).format(n / 100);
}

/** A decimal number with at most `fraction` digits after the point (a spam score: "3.2", "-0.5"). */
export function decimal(n: number, fraction = 1): string {
  return new Intl.NumberFormat(LOCALES, { maximumFractionDigits: fraction }).format(n);
}

/** A calendar day ("Mar 4, 2025"); the text as given when it is no date. */
export function day(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : new Intl.DateTimeFormat(LOCALES, { dateStyle: 'medium' }).format(d);
}

/** A size in bytes, kB, MB or GB (1000s, as file sizes are shown to people). */
export function bytes(n: number): string {
  let i = 0;
  while (n >= 1000 && i < byteUnits.length - 1) {
    n /= 1000;
    i++;
  }
  return new Intl.NumberFormat(LOCALES, { style: 'unit', unit: byteUnits[i], unitDisplay: i === 0 ? 'long' : 'short', maximumFractionDigits: i === 0 ? 0 : 1 }).format(n);
}

/** "in 5 seconds", "now", "3 minutes ago" (negative: past). */
export function relative(value: number, unit: Intl.RelativeTimeFormatUnit): string {
  return rtf.format(value, unit);
}

/**
 * When a mail came, for the list: "now" within the minute, "12 minutes ago" within the
 * hour, the time of day today, the date and time before that.
 */
export function when(iso: string, now = Date.now()): string {
  const d = new Date(iso);
  const seconds = Math.round((now - d.getTime()) / 1000);
  // A mail stamped up to two minutes ahead is new too: the page's clock moves every 30 s,
  // and the browser's may lag the server's.
  if (seconds > -120 && seconds < 60) return rtf.format(0, 'second');
  if (seconds >= 0 && seconds < 3600) return rtf.format(-Math.floor(seconds / 60), 'minute');
  return d.toDateString() === new Date(now).toDateString() ? time.format(d) : dateTime.format(d);
}

/** A date and time to the second, with its time zone (a mail's Date header; the tooltip of a list time). */
export function fullDate(d: Date): string {
  return Number.isNaN(d.getTime()) ? '' : full.format(d);
}
