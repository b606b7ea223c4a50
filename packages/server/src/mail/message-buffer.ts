// Collects a message as SMTP delivers it, so that it is held once: small messages
// as their chunks (joined once at the end), large ones copied as they arrive into
// one growable SharedArrayBuffer. Its address space is reserved for the largest
// accepted message, but memory is committed only as it grows, so its cost is what
// the message uses; and because it is shared, the parser's worker thread reads the
// very same bytes (parse.ts) instead of a copy of them, while this thread keeps them
// (a worker ended for its budget cannot take the message with it).

/** From this size on a message is collected into one shared buffer as it arrives. */
export const LARGE_MESSAGE_BYTES = 256 * 1024;

/** A growable shared buffer reserves address space, not memory; more than this is never reserved up front. */
const MAX_RESERVED_BYTES = 2 ** 31;

// Growable SharedArrayBuffers (ES2024) run on Node 20; the ES2022 library types lack them.
type GrowableShared = SharedArrayBuffer & { readonly maxByteLength: number; grow(bytes: number): void };
const GrowableShared = SharedArrayBuffer as unknown as new (bytes: number, opts: { maxByteLength: number }) => GrowableShared;

export class MessageBuffer {
  private chunks: Buffer[] = [];
  private big: GrowableShared | undefined;
  private length = 0;

  /** maxBytes: the largest message accepted (SMTP SIZE); more is still taken, at the cost of a copy. */
  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.length;
  }

  push(chunk: Buffer): void {
    if (this.big) {
      this.reserve(this.length + chunk.length);
      new Uint8Array(this.big).set(chunk, this.length);
      this.length += chunk.length;
      return;
    }
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length >= LARGE_MESSAGE_BYTES) {
      const chunks = this.chunks;
      this.chunks = [];
      this.length = 0;
      this.big = new GrowableShared(0, { maxByteLength: Math.min(MAX_RESERVED_BYTES, Math.max(this.maxBytes, LARGE_MESSAGE_BYTES) + LARGE_MESSAGE_BYTES) });
      for (const c of chunks) this.push(c);
    }
  }

  /**
   * The message in one buffer; the collector is empty afterwards. A large message's
   * buffer is a view of exactly the whole of a SharedArrayBuffer (isSharedWhole).
   */
  take(): Buffer {
    const out = this.big ? Buffer.from(this.big, 0, this.length) : Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.big = undefined;
    this.length = 0;
    return out;
  }

  private reserve(bytes: number): void {
    const big = this.big!;
    if (bytes <= big.byteLength) return;
    if (bytes <= big.maxByteLength) {
      // Exactly to the message's end: a worker reads the whole buffer as the message.
      big.grow(bytes);
      return;
    }
    // Past the declared maximum (SIZE is advisory): a bigger buffer, and one copy.
    const next = new GrowableShared(0, { maxByteLength: Math.min(MAX_RESERVED_BYTES, 2 * bytes) });
    next.grow(this.length);
    new Uint8Array(next).set(new Uint8Array(big, 0, this.length));
    this.big = next;
    next.grow(bytes);
  }
}

/** True when `raw` covers the whole of a SharedArrayBuffer: a worker can read it in place. */
export function isSharedWhole(raw: Uint8Array): boolean {
  return raw.buffer instanceof SharedArrayBuffer && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
}
