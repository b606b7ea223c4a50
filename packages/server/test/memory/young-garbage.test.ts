import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { countGarbage, endOfMessage, GARBAGE_BYTES } from '../../src/memory/young-garbage.js';

// What the SMTP side's socket reads leave behind: buffers of 64 KiB, garbage as soon as
// their bytes are copied, owned by objects too small to fill the young generation.
const CHUNK = 64 * 1024;
const MIB = 1024 * 1024;
const arrayBuffers = () => process.memoryUsage().arrayBuffers;

/** Reads `bytes` worth of chunks, each dropped at once; `count` is told of each. */
function read(bytes: number, count?: (n: number) => void): void {
  for (let at = 0; at < bytes; at += CHUNK) {
    const chunk = Buffer.alloc(CHUNK, at & 0xff);
    count?.(chunk.length);
  }
}

/** Collects whatever is left (a full round of counted reads), so each case starts from nothing held. */
async function settle(): Promise<number> {
  read(GARBAGE_BYTES, countGarbage);
  endOfMessage();
  await sleep(50);
  return arrayBuffers();
}

/** What is held above `before` once V8's sweeper (which may free on another thread) has had up to `ms`, or as soon as it is at most `atMost`. */
async function heldAfter(before: number, ms: number, atMost = -Infinity): Promise<number> {
  const end = Date.now() + ms;
  while (arrayBuffers() - before > atMost && Date.now() < end) await sleep(10);
  return arrayBuffers() - before;
}

describe('young garbage', () => {
  it('uncounted, 16 MiB of dropped read buffers stay held: V8 does not collect them on its own', async () => {
    const before = await settle();
    read(16 * MIB);
    const held = await heldAfter(before, 300);
    assert.ok(held >= 12 * MIB, `held ${held} bytes`);
  });

  it('counted, no more than about twice GARBAGE_BYTES of them is ever held', async () => {
    const before = await settle();
    let most = 0;
    read(32 * MIB, (n) => {
      countGarbage(n);
      most = Math.max(most, arrayBuffers() - before);
    });
    assert.ok(most <= 2 * GARBAGE_BYTES + 2 * CHUNK, `held up to ${most} bytes`);
    const held = await heldAfter(before, 1000, GARBAGE_BYTES + CHUNK);
    assert.ok(held <= GARBAGE_BYTES + CHUNK, `held ${held} bytes at the end`);
  });

  it('at the end of a message, what half of GARBAGE_BYTES or more of reads left is freed; less is left to the next', async () => {
    const before = await settle();
    read(GARBAGE_BYTES / 2 - CHUNK, countGarbage);
    endOfMessage();
    const small = await heldAfter(before, 200);
    assert.ok(small >= GARBAGE_BYTES / 2 - 2 * CHUNK, `a small message is not collected for (held ${small} bytes)`);
    read(CHUNK, countGarbage);
    endOfMessage();
    const held = await heldAfter(before, 1000, CHUNK);
    assert.ok(held <= CHUNK, `held ${held} bytes after the end of the message`);
  });
});
