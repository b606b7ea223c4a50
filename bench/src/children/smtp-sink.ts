// The SMTP baseline: the same smtp-server library temp-inbox uses, with the same
// protocol options, accepting every recipient and discarding every message
// (read to the end, then 250). It prints READY <port>.
import { SMTPServer } from 'smtp-server';
import { sinkOptions } from './sink-options.js';

const server = new SMTPServer(
  sinkOptions('sink.bench', 'no-op sink', (stream, _session, callback) => {
    stream.on('data', () => undefined);
    stream.on('end', () => callback(null, 'Ok: discarded'));
  }),
);
server.on('error', () => undefined);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.server.address() as { port: number }).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
