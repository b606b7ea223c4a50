// Collects a message as SMTP delivers it, so that it is held once: small messages
// as their chunks (joined once at the end), large ones copied as they arrive into
// one buffer sized for the largest accepted message. Pages of that buffer that are
// never written are never backed by memory, so its cost is what the message uses.

/** From this size on a message is collected into one buffer as it arrives. */
export const LARGE_MESSAGE_BYTES = 256 * 1024;

export class MessageBuffer {
  private chunks: Buffer[] = [];
  private big: Buffer | undefined;
  private length = 0;

  /** maxBytes: the largest message accepted (SMTP SIZE); more is still taken, at the cost of a copy. */
  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.length;
  }

  push(chunk: Buffer): void {
    if (this.big) {
      if (this.length + chunk.length > this.big.length) this.grow(this.length + chunk.length);
      chunk.copy(this.big, this.length);
      this.length += chunk.length;
      return;
    }
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length >= LARGE_MESSAGE_BYTES) {
      this.grow(Math.max(this.maxBytes, this.length));
      let offset = 0;
      for (const c of this.chunks) offset += c.copy(this.big!, offset);
      this.chunks = [];
    }
  }

  /** The message in one buffer; the collector is empty afterwards. */
  take(): Buffer {
    const out = this.big ? this.big.subarray(0, this.length) : Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.big = undefined;
    this.length = 0;
    return out;
  }

  private grow(capacity: number): void {
    const next = Buffer.allocUnsafe(Math.max(capacity, 2 * this.length));
    if (this.big) this.big.copy(next, 0, 0, this.length);
    this.big = next;
  }
}
