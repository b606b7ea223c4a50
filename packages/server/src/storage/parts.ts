// Large messages and attachments are stored in parts, by both backends: a value bound
// whole is copied whole on its way to the database (SQLite copied a 7.3 MB attachment
// twice while it stored the row; node-postgres copies each value into the query's
// message, in a buffer that grows by half at a time). Bound a part at a time, no such
// copy is larger than a part (docs/decisions.md "A large message").

/** The size of each stored part; the last may be shorter. */
export const PART_BYTES = 512 * 1024;

/** `bytes` cut into parts of PART_BYTES, as views of it (no copy): always at least one, empty for empty bytes. */
export function partsOf(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at === 0 || at < bytes.length; at += PART_BYTES) parts.push(bytes.subarray(at, at + PART_BYTES));
  return parts;
}
