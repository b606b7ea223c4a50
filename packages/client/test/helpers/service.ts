// startTempInbox() for the SDK's own tests: the same service, except that its
// authentication checks ask a closed local port (every look-up refused at once, every
// verdict temperror) and never the machine's resolvers, as the server's test harness
// does; an `env` given still wins. The README's examples and the packaging test call
// startTempInbox() itself, as written for users.
import { startTempInbox, type StartTempInboxOptions, type TempInbox } from '../../../server/src/start-temp-inbox.js';

export function startService(options: StartTempInboxOptions = {}): Promise<TempInbox> {
  return startTempInbox({ ...options, env: { DNS_SERVERS: '127.0.0.1:1', ...options.env } });
}
