// Seeds a store before the server starts: `count` small mails over `addresses`
// addresses named seed-<k>@<domain>, through @temp-inbox/server's openStore(). Metadata
// is the server's own (mailMetadata()) for a representative message, then varied.
//
// SQLite (`dataDir`): through the store's own insertMails, in transactions of 1,000
// rows, round-robin over the addresses.
// PostgreSQL (`databaseUrl`, `schema`): openStore creates and migrates the schema and
// createAddress makes the addresses; the mails are then inserted by straight SQL, 5,000
// rows a statement (unnest of arrays), into the same columns insertMails writes (the
// message in `raw`, as mail stored before the bodies table; `search` as insertMails
// makes it: array_to_tsvector of the words, each in its address's namespace, see
// indexWords below). insertMails makes two round trips per mail, which would take most
// of an hour for 1,000,000. A search through the store afterwards checks that the
// index so written is the one the server reads.
//
// `heavy`: the first address (seed-00000) gets this many of the mails, evenly spread
// in time; the rest go round-robin to the others. `search`: each mail is indexed for
// search with the text of bench/src/lib/search-corpus.ts.
//
// Usage: node --import tsx seed.ts '{"dataDir":"…","count":100000,"addresses":1000}'
//        node --import tsx seed.ts '{"databaseUrl":"postgres://…","schema":"s","count":…,"addresses":…,"heavy":10000,"search":true}'
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { mailMetadata, openStore, type AddressRecord, type NewMail, type TempInboxStore } from '@temp-inbox/server';
import { smallMessage } from '../lib/messages.js';
import { DOMAIN } from '../lib/paths.js';
import { searchTextFor } from '../lib/search-corpus.js';

interface Args {
  dataDir?: string;
  databaseUrl?: string;
  schema?: string;
  count: number;
  addresses: number;
  batch?: number;
  heavy?: number;
  search?: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const t0 = performance.now();
const postgres = args.databaseUrl !== undefined;
const batchSize = args.batch ?? (postgres ? 5000 : 1000);
const store: TempInboxStore = await openStore(postgres ? { databaseUrl: args.databaseUrl!, databaseSchema: args.schema! } : { dataDir: args.dataDir! });
const now = Date.now();

const addresses: AddressRecord[] = [];
for (let k = 0; k < args.addresses; k++) {
  const name = `seed-${String(k).padStart(5, '0')}@${DOMAIN}`;
  const rec = (await store.createAddress(name, now - 3 * 3600_000)) ?? (await store.findAddress(name));
  if (!rec) throw new Error(`could not create ${name}`);
  addresses.push(rec);
}

// One real parse for the metadata shape; per row only the subject and size change.
const sample = Buffer.from(smallMessage(0, addresses[0]!.address));
const template = await mailMetadata(sample);

// With `heavy`, every stride-th mail goes to the first address.
const heavy = Math.min(args.heavy ?? 0, args.count);
const stride = heavy > 0 ? args.count / heavy : Infinity;
let others = 0;
const addressOf = (i: number): AddressRecord => {
  if (heavy > 0) {
    if (Math.floor(i / stride) !== Math.floor((i + 1) / stride)) return addresses[0]!;
    return addresses.length > 1 ? addresses[1 + (others++ % (addresses.length - 1))]! : addresses[0]!;
  }
  return addresses[i % addresses.length]!;
};

// Spread created_at over the last ~3 hours (well inside MAIL_TTL) in insertion order.
const spanMs = 3 * 3600_000;
function mailFor(i: number): NewMail {
  const a = addressOf(i);
  const createdAt = now - spanMs + Math.floor((i / args.count) * spanMs);
  const uuid = randomUUID();
  const trace = receivedLine(a.address, uuid.slice(0, 8), new Date(createdAt));
  const body = { raw: Buffer.from(smallMessage(i, a.address)), attachments: [] };
  const metadata = JSON.stringify({ ...template, subject: `Your verification code ${i}`, size: trace.length + body.raw.length, to: [{ name: '', address: a.address }] });
  return {
    uuid,
    addressId: a.id,
    address: a.address,
    source: 'no-reply@app.example.com',
    messageId: `<seed.${i}@bench.example.com>`,
    metadata,
    trace,
    body,
    createdAt,
    ...(args.search ? { searchText: searchTextFor(i, a.address) } : {}),
  };
}

let batch: NewMail[] = [];
const bulk = postgres ? await bulkInserter() : undefined;
const flush = bulk ? bulk.insert : (mails: NewMail[]) => store.insertMails(mails).then(() => undefined);
for (let i = 0; i < args.count; i++) {
  batch.push(mailFor(i));
  if (batch.length === batchSize) {
    await flush(batch);
    batch = [];
  }
}
if (batch.length) await flush(batch);
// SQLite writes the search index after each delivery, in batches, and a search indexes whatever
// is still queued first: done here, so that the server starts on a store whose index is complete,
// as it is after hours of steady mail. On PostgreSQL it checks the index the bulk insert wrote.
if (args.search) {
  const found = await store.searchMails(addresses[0]!.id, 'code', 1, 0);
  if (found.count === 0) throw new Error('the seeded mails are not found by a search for "code": the search index is not written as the store reads it');
}
await bulk?.end();
await store.close();
const first = { id: addresses[0]!.id, address: addresses[0]!.address };
process.stdout.write(`SEEDED ${JSON.stringify({ count: args.count, addresses: args.addresses, heavy, seconds: (performance.now() - t0) / 1000, rawBytes: sample.length, first })}\n`);

/** PostgreSQL: one INSERT … SELECT FROM unnest(…) per batch, in the columns insertMails writes. */
async function bulkInserter(): Promise<{ insert: (mails: NewMail[]) => Promise<void>; end: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  await client.query(`SET search_path TO "${args.schema!.replace(/"/g, '""')}"`);
  const sql =
    'INSERT INTO mails (uuid, address_id, address, source, message_id, metadata, raw, size, created_at, search) ' +
    "SELECT u, a, ad, s, mi, md, r, sz, c, CASE WHEN w IS NULL THEN NULL ELSE array_to_tsvector(string_to_array(w, ' ')) END " +
    'FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::bigint[], $9::bigint[], $10::text[]) AS t(u, a, ad, s, mi, md, r, sz, c, w)';
  const insert = async (mails: NewMail[]) => {
    const raw = mails.map((m) => Buffer.concat([m.trace, m.body.raw]));
    await client.query(sql, [
      mails.map((m) => m.uuid),
      mails.map((m) => m.addressId),
      mails.map((m) => m.address),
      mails.map((m) => m.source),
      mails.map((m) => m.messageId),
      mails.map((m) => m.metadata),
      raw,
      raw.map((r) => r.length),
      mails.map((m) => m.createdAt),
      mails.map((m) => (m.searchText ? indexWords(m.addressId, m.searchText).join(' ') || null : null)),
    ]);
  };
  return { insert, end: () => client.end() };
}

/** The trace line a delivery prepends, as the server writes one (RFC 5321 §4.4). */
function receivedLine(recipient: string, id: string, date: Date): Buffer {
  const line = `Received: from mx.example.com ([192.0.2.10])\r\n\tby mx.test (temp-inbox) with ESMTP id ${id}\r\n\tfor <${recipient}>; ${date.toUTCString()}\r\n`;
  return Buffer.from(line, 'latin1');
}

/**
 * A mail's words as the store's search column holds them: Unicode letters and digits,
 * lower-cased, without accents, each once, inside its address's namespace z<id>z
 * (docs/decisions.md "Search"). The search after seeding fails if this drifts from the store.
 */
function indexWords(addressId: number, text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return [...new Set(folded.match(/[\p{L}\p{N}]+/gu) ?? [])].map((w) => `z${addressId}z${w}`);
}
