// The durable SMTP baseline: the same smtp-server library and protocol options as the
// no-op sink (smtp-sink.ts), but every message is appended to one file and fdatasync'd
// before its 250, with group commit: the messages that end while a sync is under way
// are written together and share the next one. That is the least a store that answers
// 250 only for what is on disk must do; temp-inbox does this and parses, indexes and
// stores. Argument: the data directory. It prints READY <port>.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { sinkOptions } from './sink-options.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: durable-sink.ts <data directory>');
const file = await open(join(dir, 'mail.log'), 'a');

type Pending = { bytes: Buffer; done: (err: Error | null) => void };
let pending: Pending[] = [];
let syncing = false;

async function commit(): Promise<void> {
  syncing = true;
  while (pending.length > 0) {
    const group = pending;
    pending = [];
    try {
      await file.write(Buffer.concat(group.map((p) => p.bytes)));
      await file.datasync();
      for (const p of group) p.done(null);
    } catch (err) {
      for (const p of group) p.done(err as Error);
    }
  }
  syncing = false;
}

function append(bytes: Buffer, done: (err: Error | null) => void): void {
  pending.push({ bytes, done });
  if (!syncing) void commit();
}

const server = new SMTPServer(
  sinkOptions('durable-sink.bench', 'durable sink', (stream, _session, callback) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      // A length prefix keeps the file's messages apart.
      const body = Buffer.concat(chunks);
      const head = Buffer.from(`${body.length}\n`);
      append(Buffer.concat([head, body]), (err) => (err ? callback(err) : callback(null, 'Ok: on disk')));
    });
  }),
);
server.on('error', () => undefined);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.server.address() as { port: number }).port}\n`);
});
process.once('SIGTERM', () => server.close(() => void file.close().then(() => process.exit(0))));
