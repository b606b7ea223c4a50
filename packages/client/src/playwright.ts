// @temp-inbox/client/playwright: Playwright Test with an `inbox` fixture — a fresh
// inbox for every test, deleted after it. @playwright/test is an optional peer
// dependency: only this entry point loads it.
//
//   import { test, expect } from '@temp-inbox/client/playwright';
//   test('sign-up', async ({ page, inbox }) => {
//     await page.getByLabel('Email').fill(inbox.address);
//     const code = await inbox.waitForCode({ subject: 'Verify' });
//   });
import { test as base } from '@playwright/test';
import { TempInboxClient, type CreateInboxOptions, type Inbox } from './client.js';

export interface TempInboxFixtures {
  /** A fresh inbox for this test; deleted when the test ends, passed or failed. */
  inbox: Inbox;
  /** The client the inbox fixture uses (one per test). */
  tempInbox: TempInboxClient;
}

export interface TempInboxOptions {
  /** The service; default $TEMP_INBOX_URL. Set it in playwright.config's `use`. */
  tempInboxUrl: string | undefined;
  /** How the fixture's inbox is created (name, domain); default a random name on the default domain. */
  tempInboxOptions: CreateInboxOptions;
}

// The options in Playwright's own option list, so that a plain
// `defineConfig({ use: { tempInboxUrl } })` in playwright.config.ts type-checks.
declare module '@playwright/test' {
  interface PlaywrightTestOptions {
    /** temp-inbox: the service's URL (default $TEMP_INBOX_URL). */
    tempInboxUrl: string | undefined;
    /** temp-inbox: how the `inbox` fixture's inbox is created (name, domain). */
    tempInboxOptions: CreateInboxOptions;
  }
}

// Both options are declared in PlaywrightTestOptions above, where Playwright's types take no
// `option: true`; at run time that flag is what lets playwright.config's `use` set them.
const OPTION = { option: true } as unknown as { scope: 'test' };

/** Playwright's `test`, with the `inbox` and `tempInbox` fixtures and the `tempInboxUrl` option. */
export const test = base.extend<TempInboxFixtures>({
  tempInboxUrl: [undefined, OPTION],
  tempInboxOptions: [{}, OPTION],
  tempInbox: async ({ tempInboxUrl }, use) => {
    const baseUrl = tempInboxUrl ?? process.env['TEMP_INBOX_URL'];
    if (!baseUrl) throw new Error('The inbox fixture needs the temp-inbox service: set TEMP_INBOX_URL, or tempInboxUrl in playwright.config.');
    await use(new TempInboxClient({ baseUrl }));
  },
  inbox: async ({ tempInbox, tempInboxOptions }, use) => {
    const inbox = await tempInbox.createInbox(tempInboxOptions);
    try {
      await use(inbox);
    } finally {
      await inbox[Symbol.asyncDispose]();
    }
  },
});

export { expect } from '@playwright/test';
export * from './index.js';
