// Which messages are small: they may share a parse task with others (up to BATCH_MESSAGES
// of them, BATCH_BYTES in all) and wait in the parser's small lane (parse-lanes.ts).
/** Messages up to this size may share a task with others. */
const BATCH_MESSAGE_BYTES = 64 * 1024;
/** At most this many messages, and this many bytes, per task. */
export const BATCH_MESSAGES = 32;
export const BATCH_BYTES = 512 * 1024;

/**
 * A small message with more lines that open with "--" (MIME boundaries) than this is
 * parsed as a large one, alone and in the large lane. Parts cost the parser about 14 µs
 * each: 64 KiB of empty parts (5,000) held a thread for 70–270 ms, and such mail sent in a
 * loop had ordinary mail, batched with it in the small lane, wait behind all of it.
 * Ordinary mail has a few boundary lines; a message wrongly counted here is only parsed
 * alone.
 */
export const SMALL_MAX_BOUNDARY_LINES = 256;
const BOUNDARY_LINE = Buffer.from('\n--');

/** More than SMALL_MAX_BOUNDARY_LINES lines open with "--" (a scan of the bytes, no parse). */
function manyParts(raw: Buffer): boolean {
  let n = 0;
  for (let at = raw.indexOf(BOUNDARY_LINE); at !== -1; at = raw.indexOf(BOUNDARY_LINE, at + BOUNDARY_LINE.length)) {
    if (++n > SMALL_MAX_BOUNDARY_LINES) return true;
  }
  return false;
}

/** Small enough to share a task with others, and to wait in the small lane. */
export function isSmall(raw: Buffer): boolean {
  return raw.length <= BATCH_MESSAGE_BYTES && !manyParts(raw);
}
