// The Blob postal-mime gathers each decoded part in, for the parser's worker
// threads. postal-mime builds `new Blob(lines)` for every part and reads it back
// with `arrayBuffer()`; Node's Blob keeps each line as a native blob and reads
// them back through a stream, which made that five times the cost of the whole
// rest of a parse (0.5 of 0.6 ms for a 3 KB message on Node 20; see
// docs/benchmarks-journal.md "Winning part of it back"). postal-mime has no option for it, so the
// worker (parse-worker.ts), which runs nothing else, installs this one as its
// global Blob. It gives exactly the bytes Node's Blob would for what postal-mime
// passes (strings, ArrayBuffers, views, Blobs: tested side by side), with one
// difference: it keeps the ArrayBuffers and views it is given rather than copying them
// (postal-mime never changes a part it handed over: its base64 decoder hands over each
// decoded piece as a fresh ArrayBuffer), so a part's bytes are copied once, when read.
// A copy made here as well held a large attachment a third time in the parser's
// thread (docs/benchmarks-journal.md "Memory of one large message").
const encoder = new TextEncoder();
/** Shared by every blob (only ever read: a blob's bytes are copied when they are read). */
const NEWLINE = encoder.encode('\n');

type BlobPart = string | ArrayBuffer | ArrayBufferView | ConcatBlob;

export class ConcatBlob {
  readonly type: string;
  readonly size: number;
  readonly #parts: Uint8Array[];

  constructor(parts: Iterable<BlobPart> = [], options: { type?: string } = {}) {
    // As Blob: a type that is not all printable ASCII is no type; it is lower-cased.
    const type = String(options.type ?? '');
    this.type = /^[\x20-\x7e]*$/.test(type) ? type.toLowerCase() : '';
    const list: Uint8Array[] = [];
    for (const part of parts) {
      // postal-mime's pass-through decoder gives a '\n' after every line: encoded once, here.
      if (part === '\n') list.push(NEWLINE);
      else if (typeof part === 'string') list.push(encoder.encode(part));
      else if (part instanceof ConcatBlob) list.push(...part.#parts);
      else if (part instanceof ArrayBuffer) list.push(new Uint8Array(part));
      else if (ArrayBuffer.isView(part)) list.push(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
      else list.push(encoder.encode(String(part)));
    }
    this.#parts = list;
    this.size = list.reduce((n, p) => n + p.byteLength, 0);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#joined().buffer as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return this.#joined();
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(this.#joined());
  }

  get [Symbol.toStringTag](): string {
    return 'Blob';
  }

  #joined(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.#parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }
}

/** Makes ConcatBlob this thread's global Blob (call only in a thread that runs nothing but the parser). */
export function installConcatBlob(): void {
  Object.defineProperty(globalThis, 'Blob', { value: ConcatBlob, writable: true, configurable: true, enumerable: false });
}
