// The storage contract's report summary cases (store.ts ReportSummaryStore; docs/api.md
// "Deliverability report"), run by store-contract.ts against every backend: a summary is
// kept once per mail and read with its head and its webhook deliveries, goes with the mail,
// and keeping it (or saying none is coming) makes the deliveries that wait for it due.
import assert from 'node:assert/strict';
import type { Store } from '../../src/storage/store.js';
import { address, newMail, T0 } from './store-fixtures.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const WAIT = 15_000;
const SUMMARY = JSON.stringify({ verdict: 'warn', spam: 'pass', html: 'warn', links: 'pass', content: 'pass', sender: 'fail', spam_score: 1.5, spam_threshold: 15 });
const OTHER = JSON.stringify({ verdict: 'pass', spam: 'pass', html: 'pass', links: 'pass', content: 'pass', sender: 'pass', spam_score: 0, spam_threshold: 15 });

const claim = (store: Store, now: number) => store.claimDeliveries({ owner: 'node-a', now, leaseMs: 60_000, limit: 10, busyWebhooks: [], operator: true });

export const REPORT_SUMMARY_CASES: Case[] = [
  [
    'keepReportSummary: kept once per mail (the first stays), read by getMailHead, for several mails at once; none for a mail that is gone; it goes with the mail',
    async (store) => {
      const a = await address(store, 'summary-a@example.com');
      const b = await address(store, 'summary-b@example.com');
      const [ma, mb] = [newMail(a, T0 + 1), newMail(b, T0 + 1)];
      const [ida, idb] = await store.insertMails([ma, mb]);
      assert.equal((await store.getMailHead(a.id, ma.uuid))!.reportSummary, undefined, 'none before one is kept');
      assert.equal(await store.keepReportSummary([{ id: ida!, addressId: a.id }, { id: idb!, addressId: b.id }], SUMMARY, T0 + 2), 0, 'no deliveries waited');
      assert.equal((await store.getMailHead(a.id, ma.uuid))!.reportSummary, SUMMARY);
      assert.equal((await store.getMailHead(b.id, mb.uuid))!.reportSummary, SUMMARY, 'each mail of the call');
      await store.keepReportSummary([{ id: ida!, addressId: a.id }], OTHER, T0 + 3);
      assert.equal((await store.getMailHead(a.id, ma.uuid))!.reportSummary, SUMMARY, 'the first kept stays');
      await store.keepReportSummary([{ id: ida!, addressId: a.id }], null, T0 + 3);
      assert.equal((await store.getMailHead(a.id, ma.uuid))!.reportSummary, SUMMARY, 'null keeps nothing and removes nothing');
      // A mail not there (yet): nothing is kept for it, and no error.
      await store.keepReportSummary([{ id: idb! + 1000, addressId: b.id }], SUMMARY, T0 + 3);
      const later = newMail(b, T0 + 4);
      const [idLater] = await store.insertMails([later]);
      if (idLater === idb! + 1000) assert.fail('the id kept for is the new mail’s: pick another');
      assert.equal((await store.getMailHead(b.id, later.uuid))!.reportSummary, undefined);
      // Gone with the mail: a purged mail's summary is not kept again for it.
      await store.purge({ mailBefore: T0 + 2, addressBefore: 0, sessionBefore: 0 });
      assert.equal(await store.getMailHead(a.id, ma.uuid), undefined);
      await store.keepReportSummary([{ id: ida!, addressId: a.id }], SUMMARY, T0 + 5);
      assert.equal(await store.getMailHead(a.id, ma.uuid), undefined, 'nothing kept for a purged mail');
    },
  ],
  [
    'webhooksDueAt: deliveries wait until then; keepReportSummary makes them due at once and the claim carries the summary; null makes them due without one; a retry keeps its back-off',
    async (store) => {
      const a = await address(store, 'summary-hook@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/hook', 'whsec_a', T0);
      const waiting = newMail(a, T0 + 1, { webhooksDueAt: T0 + 1 + WAIT, operatorWebhook: true });
      const [id] = await store.insertMails([waiting]);
      assert.deepEqual(await claim(store, T0 + 1000), [], 'not due before webhooksDueAt');
      assert.equal(await store.nextDeliveryAt(true, T0 + 1000), T0 + 1 + WAIT, 'due at webhooksDueAt');
      assert.equal(await store.keepReportSummary([{ id: id!, addressId: a.id }], SUMMARY, T0 + 2000), 2, "the address's and the operator's delivery made due");
      const claimed = await claim(store, T0 + 2000);
      assert.deepEqual(claimed.map((c) => [c.webhookId, c.mail.id, c.mail.reportSummary]).sort(), [[hook.id, id, SUMMARY], [null, id, SUMMARY]].sort());
      assert.equal(claimed[0]!.createdAt, T0 + 1, 'queued when the mail arrived (retries stop a day after that)');
      // A failed attempt's next time is the dispatcher's back-off: keeping a summary later leaves it.
      const own = claimed.find((c) => c.webhookId === hook.id)!;
      const failed = { webhookId: hook.id, addressId: a.id, mailUuid: waiting.uuid, url: 'https://a.example/hook', attempt: 1, at: T0 + 2000, outcome: 'failed' as const, status: 503, durationMs: 5, error: 'x', nextAt: T0 + 60_000 };
      await store.finishDelivery('node-a', own.id, failed, { notBefore: 0, timeouts: 0 });
      assert.equal(await store.keepReportSummary([{ id: id!, addressId: a.id }], null, T0 + 3000), 0, 'a delivery attempted before keeps its next time');

      // No summary coming: the waiting deliveries go without one, at once.
      const bare = newMail(a, T0 + 5, { webhooksDueAt: T0 + 5 + WAIT });
      const [bareId] = await store.insertMails([bare]);
      assert.equal(await store.keepReportSummary([{ id: bareId!, addressId: a.id }], null, T0 + 4000), 1);
      const next = (await claim(store, T0 + 4000)).filter((c) => c.mail.id === bareId);
      assert.equal(next.length, 1);
      assert.equal(next[0]!.mail.reportSummary, undefined, 'claimed without a summary');
      // Without webhooksDueAt a delivery is due when its mail arrived, as before.
      const c = await address(store, 'summary-plain@example.com');
      await store.putWebhook(c.id, 'https://c.example/hook', 'whsec_c', T0);
      const plain = newMail(c, T0 + 6);
      const [plainId] = await store.insertMails([plain]);
      assert.deepEqual((await claim(store, T0 + 6)).map((d) => d.mail.id), [plainId], 'due at once');
    },
  ],
];
