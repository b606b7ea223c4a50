// The attachment policy's worst case (docs/decisions.md "Attachment policy"): a large
// message of many parts is refused without holding the event loop. It times the event loop,
// so it runs alone (scripts/test.mjs).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { multipart, send, type Part } from '../helpers/attachment-mail.js';
import { createAddress, mailCount, startTestServer, type TestServer } from '../helpers/harness.js';

describe('attachment policy: the worst case, a large message of many parts', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());

  it('a 9 MB message of 16,000 parts with as many extensions, an .exe last: refused, the event loop never held for long', async () => {
    const inbox = await createAddress(server);
    const parts: Part[] = Array.from({ length: 16_000 }, (_, i) => ({ filename: `part-${i}.x${i}`, content: Buffer.alloc(300, i % 256) }));
    parts.push({ filename: 'last.exe', content: Buffer.from('text') });
    const message = multipart(parts);
    assert.ok(message.length > 9_000_000 && message.length < 10_000_000, `${message.length} bytes`);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = process.hrtime.bigint();
    const res = await send(server, inbox.address, message);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    delay.disable();
    const maxMs = delay.max / 1e6;
    console.log(`worst case: ${message.length} bytes, ${parts.length} parts: answered in ${ms.toFixed(0)} ms, event loop delay max ${maxMs.toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`);
    // Over 64 different extensions: the rest are not looked at, so the message is refused as uncheckable.
    assert.equal(res.code, 552, res.text);
    assert.match(res.text, /too many different file types to check/);
    assert.equal(await mailCount(server, inbox.jwt), 0);
    assert.ok(maxMs < 250, `event loop held ${maxMs} ms`);
  });
});
