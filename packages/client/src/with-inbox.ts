// withInbox(fn): a fresh inbox for one piece of work, deleted afterwards whatever
// happens. Runner-neutral: works in Vitest, Jest, node:test, Mocha or a plain script.
import { TempInboxClient, type ClientOptions, type CreateInboxOptions, type Inbox } from './client.js';

export interface WithInboxOptions extends ClientOptions, CreateInboxOptions {
  /** A client to use instead of one made from baseUrl / $TEMP_INBOX_URL. */
  client?: TempInboxClient;
}

/**
 * Creates an inbox (on `baseUrl`, or $TEMP_INBOX_URL), runs `fn` with it, deletes it,
 * and returns what `fn` returned. The inbox is deleted when `fn` throws too; the
 * error is then passed on.
 */
export async function withInbox<T>(fn: (inbox: Inbox, client: TempInboxClient) => T | Promise<T>, opts: WithInboxOptions = {}): Promise<T> {
  const { client: given, name, domain, fallbackToRandom, cfToken, ...clientOptions } = opts;
  const client = given ?? new TempInboxClient(clientOptions);
  const inbox = await client.createInbox({
    ...(name !== undefined ? { name } : {}),
    ...(domain !== undefined ? { domain } : {}),
    ...(fallbackToRandom !== undefined ? { fallbackToRandom } : {}),
    ...(cfToken !== undefined ? { cfToken } : {}),
  });
  let failed = false;
  try {
    return await fn(inbox, client);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    // A failure to delete must not hide the error fn threw.
    if (failed) await inbox[Symbol.asyncDispose]().catch(() => undefined);
    else await inbox[Symbol.asyncDispose]();
  }
}
