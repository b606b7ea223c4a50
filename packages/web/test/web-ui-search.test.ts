// Searching an inbox in the web UI (Chromium): a word only a mail's body has narrows
// the list to that mail, a subject word is marked, clearing the field brings the
// whole list back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, sendMail } from '../../server/test/helpers/harness.js';
import { serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

describe('web UI: search', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  const suite = serverAndBrowser();

  it('narrows the list to matches, marks the words, and restores the list when cleared', async () => {
    const made = await createAddress(suite.server, { name: 'ui-search' });
    const filler = 'An ordinary paragraph that fills the preview well past its two hundred characters, so that a word placed at the very end of the body cannot be seen in the list. '.repeat(3);
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ Subject: 'Invoice for March' }, `${filler}\nSecret word: marmalade.`) });
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ Subject: 'Weekly newsletter' }, 'Nothing to see here.') });
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ Subject: 'Invoice for April' }, 'Pay soon.') });
    const page = await suite.browser.newPage();
    await openInboxLink(page, suite.server.httpUrl, made.jwt);
    const items = page.locator('.list li');
    await page.getByText('Weekly newsletter').waitFor();
    assert.equal(await items.count(), 3);

    const search = page.getByLabel('Search this inbox');
    await search.fill('marmalade');
    await page.getByText('1 found').waitFor();
    assert.equal(await items.count(), 1);
    assert.equal(await items.locator('.subject').textContent(), 'Invoice for March');

    await search.fill('invoice');
    await page.getByText('2 found').waitFor();
    assert.deepEqual(await page.locator('.list li .subject mark').allTextContents(), ['Invoice', 'Invoice']);

    await search.fill('zebra');
    await page.getByText('Nothing in this inbox matches “zebra”.').waitFor();

    await search.fill('');
    await page.getByText('3 mails').waitFor();
    assert.equal(await items.count(), 3);
    await page.close();
  });
});
