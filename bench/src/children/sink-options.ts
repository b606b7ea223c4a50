// The smtp-server options both baselines share with temp-inbox's own protocol settings
// (smtp-sink.ts discards each message, durable-sink.ts puts it on disk), so that they
// differ only in what they do with the message.
import type { SMTPServerOptions } from 'smtp-server';

export function sinkOptions(name: string, banner: string, onData: NonNullable<SMTPServerOptions['onData']>): SMTPServerOptions {
  return {
    name,
    banner,
    size: 10 * 1024 * 1024,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    disableReverseLookup: true,
    logger: false,
    socketTimeout: 60_000,
    onData,
  };
}
