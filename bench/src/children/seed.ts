// Seeds a SQLite store before the server starts: `count` small mails spread
// round-robin over `addresses` addresses named seed-<k>@<domain>, in
// transactions of 1,000 rows through the store's own insertMails. Metadata is
// built by the server's own parser from a representative message, then varied.
// Usage: node --import tsx seed.ts '{"dataDir":"…","count":100000,"addresses":1000}'
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqliteStore } from '../../../packages/server/dist/storage/sqlite/sqlite-store.js';
import { buildMetadata, parseMessage } from '../../../packages/server/dist/mail/parse.js';
import { receivedHeader } from '../../../packages/server/dist/mail/received.js';
import type { NewMail } from '../../../packages/server/dist/storage/store.js';
import { smallMessage } from '../lib/messages.js';
import { DOMAIN } from '../lib/paths.js';

const args = JSON.parse(process.argv[2] ?? '{}') as { dataDir: string; count: number; addresses: number; batch?: number };
const batchSize = args.batch ?? 1000;
const t0 = performance.now();
const store = openSqliteStore(join(args.dataDir, 'temp-inbox.sqlite'));
const now = Date.now();

const addresses = [];
for (let k = 0; k < args.addresses; k++) {
  const name = `seed-${String(k).padStart(5, '0')}@${DOMAIN}`;
  const rec = (await store.createAddress(name, now - 3 * 3600_000)) ?? (await store.findAddress(name));
  if (!rec) throw new Error(`could not create ${name}`);
  addresses.push(rec);
}

// One real parse for the metadata shape; per row only the subject and size change.
const sample = Buffer.from(smallMessage(0, addresses[0]!.address));
const template = buildMetadata(await parseMessage(sample), sample.length);

// Spread created_at over the last ~3 hours (well inside MAIL_TTL) in insertion order.
const spanMs = 3 * 3600_000;
let batch: NewMail[] = [];
for (let i = 0; i < args.count; i++) {
  const a = addresses[i % addresses.length]!;
  const createdAt = now - spanMs + Math.floor((i / args.count) * spanMs);
  const uuid = randomUUID();
  const trace = receivedHeader({ helo: 'mx.example.com', remoteAddress: '192.0.2.10', hostname: 'mx.test', protocol: 'ESMTP', recipient: a.address, id: uuid.slice(0, 8), date: new Date(createdAt) });
  const body = { raw: Buffer.from(smallMessage(i, a.address)), attachments: [] };
  const metadata = JSON.stringify({ ...template, subject: `Your verification code ${i}`, size: trace.length + body.raw.length, to: [{ name: '', address: a.address }] });
  batch.push({ uuid, addressId: a.id, address: a.address, source: 'no-reply@app.example.com', messageId: `<seed.${i}@bench.example.com>`, metadata, trace, body, createdAt });
  if (batch.length === batchSize) {
    await store.insertMails(batch);
    batch = [];
  }
}
if (batch.length) await store.insertMails(batch);
await store.close();
const first = { id: addresses[0]!.id, address: addresses[0]!.address };
process.stdout.write(`SEEDED ${JSON.stringify({ count: args.count, addresses: args.addresses, seconds: (performance.now() - t0) / 1000, rawBytes: sample.length, first })}\n`);
