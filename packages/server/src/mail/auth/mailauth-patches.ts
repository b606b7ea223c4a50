// Three changes to how mailauth (4.13.3, pinned) does its work, not to what it finds.
// Every mail is checked before its 250 (docs/decisions.md "Authentication verdicts"):
// a check of a typical signed 4 KB mail took about 1.2 ms of CPU, most of it in the
// first two places, and the third let one hostile header field cost seconds.
//
// 1. Keys (lib/tools.js getPublicKey). For every signature mailauth reads the key
//    record anew: validates it, builds a key object, exports it as PEM, and
//    crypto.verify parses the PEM once more. Here what it built from each record is
//    kept, keyed by the record's text, and the key object itself is handed back
//    (crypto.verify takes it as it is). The record is still looked up for every
//    signature (through the mail's resolver, with its budget and cache, auth-dns.ts),
//    so a changed or removed key is seen at once; errors are not kept.
// 2. The end of the header block (lib/dkim/message-parser.js processChunk). mailauth
//    looks for it a byte at a time, allocating an array per byte; here with
//    Buffer.indexOf, finding the same position (a line feed after a line feed, or
//    after CR LF), then going on exactly as mailauth does.
//
// 3. Reading the header block (lib/tools.js parseHeaders). mailauth joins each
//    continuation line to the field before it by copying the field's lines so far
//    and removing the line from the array of all lines: quadratic in the lines of
//    one field, so that one folded field of 200 KB took 3 s of CPU to read and one of
//    400 KB 13 s (docs/security.md "Authentication checks (DNS)"). Here each line is
//    appended once, giving the same fields.
//
// This module must be imported before mailauth itself: mailauth's DKIM and ARC
// modules copy getPublicKey out of lib/tools.js when they load. Imported later (a
// test that loads mailauth first), the first change is missing and only speed differs.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';

type Resolver = (name: string, rrtype: string) => Promise<unknown>;
interface PublicKeyResult {
  publicKey: string | KeyObject;
  rr: string;
  modulusLength?: number;
}
type GetPublicKey = (type: string, name: string, minBitLength: number | undefined, resolver: Resolver) => Promise<PublicKeyResult>;

/** What processChunk reads and writes of mailauth's MessageParser. */
interface MessageParser {
  state: 'header' | 'body';
  stateBytes: number[];
  headerChunks: Buffer[];
  headers: unknown;
  messageHeaders(headers: unknown): Promise<void>;
  nextChunk(chunk: Buffer): Promise<void>;
}

/** Key records kept (each a few hundred bytes of text and one key object). */
const MAX_KEYS = 1000;

interface HeaderRow {
  key: string | null;
  casedKey: string | undefined;
  line: Buffer;
}

/**
 * mailauth's parseHeaders, linear: the header block's fields, each with its continuation
 * lines (a line starting with white space belongs to the field before it; a first line
 * that does stays a field of its own), keyed by the lower-cased name before the colon.
 */
export function parseHeaders(buf: Buffer): { parsed: HeaderRow[]; original: Buffer } {
  const rows: string[][] = [];
  for (const line of buf.toString('binary').replace(/[\r\n]+$/, '').split(/\r?\n/)) {
    const last = rows[rows.length - 1];
    if (last && /^\s/.test(line)) last.push(line);
    else rows.push([line]);
  }
  const parsed = rows.map((lines): HeaderRow => {
    const row = lines.join('\r\n');
    const name = /^[^:]+/.exec(row);
    const casedKey = name ? name[0].trim() : undefined;
    return { key: casedKey === undefined ? null : casedKey.toLowerCase(), casedKey, line: Buffer.from(row, 'binary') };
  });
  return { parsed, original: buf };
}

const require = createRequire(import.meta.url);
const tools = require('mailauth/lib/tools.js') as { getPublicKey: GetPublicKey; parseHeaders: (b: Buffer) => unknown; patchedByTempInbox?: true };
// Before the parser is loaded: it copies parseHeaders out of lib/tools.js when it loads.
if (!tools.patchedByTempInbox) tools.parseHeaders = parseHeaders;
const parser = require('mailauth/lib/dkim/message-parser.js') as { MessageParser: { prototype: MessageParser & { processChunk(chunk: Buffer): Promise<void> } } };

if (!tools.patchedByTempInbox) {
  tools.patchedByTempInbox = true;

  const original = tools.getPublicKey;
  const kept = new LRUCache<string, PublicKeyResult>({ max: MAX_KEYS });
  tools.getPublicKey = async (type, name, minBitLength, resolver) => {
    const answer = await resolver(name, 'TXT');
    const key = `${type}\u0000${minBitLength ?? ''}\u0000${JSON.stringify(answer)}`;
    const hit = kept.get(key);
    if (hit) return { ...hit };
    // The answer already in hand: mailauth's own reading of it, without a second look-up.
    const result = await original(type, name, minBitLength, async () => answer);
    const entry = { ...result, publicKey: typeof result.publicKey === 'string' ? createPublicKey(result.publicKey) : result.publicKey };
    kept.set(key, entry);
    return { ...entry };
  };

  parser.MessageParser.prototype.processChunk = async function processChunk(this: MessageParser, chunk: Buffer): Promise<void> {
    if (!chunk || !chunk.length) return;
    if (this.state === 'header') {
      // The bytes before this chunk (at most 4), as mailauth keeps them.
      const prev = this.stateBytes;
      const before = (i: number, back: number): number | undefined => (i - back >= 0 ? chunk[i - back] : prev[prev.length - (back - i)]);
      let end = -1;
      for (let at = chunk.indexOf(0x0a); at >= 0; at = chunk.indexOf(0x0a, at + 1)) {
        const b1 = before(at, 1);
        if (b1 === 0x0a || (b1 === 0x0d && before(at, 2) === 0x0a)) {
          end = at;
          break;
        }
      }
      if (end < 0) {
        this.headerChunks.push(chunk);
        this.stateBytes = [...prev, ...chunk.subarray(Math.max(0, chunk.length - 4))].slice(-4);
        return;
      }
      this.state = 'body';
      this.headerChunks.push(end === chunk.length - 1 ? chunk : chunk.subarray(0, end + 1));
      this.headers = parseHeaders(Buffer.concat(this.headerChunks));
      await this.messageHeaders(this.headers);
      if (end === chunk.length - 1) return;
      chunk = chunk.subarray(end + 1);
    }
    await this.nextChunk(chunk);
  };
}
