// The storage contract's webhook cases (store.ts WebhookStore; docs/decisions.md
// "Webhooks"), run by store-contract.ts against every backend with its other cases:
// webhooks per address, deliveries queued by insertMails in the mail's transaction, claims
// with a lease (never the same delivery twice while it lasts, one per webhook, the busy
// ones and the operator's left out on request), attempts recorded, pruning, and what
// goes when an address, a mail or a webhook does.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressRecord, NewMail, Store, WebhookAttempt } from '../../src/storage/store.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const T0 = 1_700_000_000_000;
const LEASE = 60_000;

async function address(store: Store, name: string): Promise<AddressRecord> {
  const a = await store.createAddress(name, T0);
  assert.ok(a, `could not create ${name}`);
  return a;
}

let seq = 0;
function newMail(to: AddressRecord, createdAt: number, over: Partial<NewMail> = {}): NewMail {
  const n = ++seq;
  return {
    uuid: randomUUID(),
    addressId: to.id,
    address: to.address,
    source: `s${n}@example.org`,
    messageId: `<w${n}@example.org>`,
    metadata: JSON.stringify({ subject: `hook ${n}`, attachments: [] }),
    trace: Buffer.alloc(0),
    body: { raw: Buffer.from(`Subject: hook ${n}\r\n\r\nbody\r\n`), attachments: [] },
    createdAt,
    ...over,
  };
}

const claim = (store: Store, over: Partial<Parameters<Store['claimDeliveries']>[0]> = {}) =>
  store.claimDeliveries({ owner: 'node-a', now: T0 + 1000, leaseMs: LEASE, limit: 10, busyWebhooks: [], operator: true, ...over });

function attempt(over: Partial<WebhookAttempt> & Pick<WebhookAttempt, 'webhookId' | 'addressId' | 'mailUuid'>): WebhookAttempt {
  return { url: 'https://hooks.example/in', attempt: 1, at: T0 + 1000, outcome: 'delivered', status: 200, durationMs: 12, error: null, nextAt: null, ...over };
}

export const WEBHOOK_CASES: Case[] = [
  [
    'webhooks: put, get, replace (same id, new URL and secret) and delete, per address',
    async (store) => {
      const a = await address(store, 'hook-a@example.com');
      const b = await address(store, 'hook-b@example.com');
      assert.equal(await store.getWebhook(a.id), undefined);
      const first = await store.putWebhook(a.id, 'https://one.example/x', 'whsec_one', T0);
      assert.deepEqual(first, { id: first.id, addressId: a.id, url: 'https://one.example/x', secret: 'whsec_one', createdAt: T0 });
      assert.deepEqual(await store.getWebhook(a.id), first);
      assert.equal(await store.getWebhook(b.id), undefined, "b has none of a's");
      const second = await store.putWebhook(a.id, 'https://two.example/y', 'whsec_two', T0 + 5);
      assert.deepEqual(second, { id: first.id, addressId: a.id, url: 'https://two.example/y', secret: 'whsec_two', createdAt: T0 + 5 }, 'replaced in place');
      const theirs = await store.putWebhook(b.id, 'https://b.example/', 'whsec_b', T0);
      assert.notEqual(theirs.id, first.id);
      assert.equal(await store.deleteWebhook(a.id), true);
      assert.equal(await store.deleteWebhook(a.id), false);
      assert.equal(await store.getWebhook(a.id), undefined);
      assert.deepEqual(await store.getWebhook(b.id), theirs, "deleting a's leaves b's");
    },
  ],
  [
    "insertMails queues a delivery for each mail of an address with a webhook, and the operator's when asked; claimDeliveries hands out each once while its lease lasts",
    async (store) => {
      const a = await address(store, 'queue-a@example.com');
      const b = await address(store, 'queue-b@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/hook', 'whsec_a', T0);
      const withHook = newMail(a, T0 + 1);
      const withoutHook = newMail(b, T0 + 2);
      const operatorToo = newMail(b, T0 + 3, { operatorWebhook: true });
      // The counter the mail service wakes the dispatcher by: one for each delivery queued, none for mail without.
      const counted = store.deliveriesQueued();
      await store.insertMails([newMail(b, T0)]);
      assert.equal(store.deliveriesQueued(), counted, 'a mail without a webhook queues nothing');
      const [idA, , idOp] = await store.insertMails([withHook, withoutHook, operatorToo]);
      assert.equal(store.deliveriesQueued(), counted + 2, "a's delivery and the operator's");
      assert.equal(await store.nextDeliveryAt(true, T0), T0 + 1);
      assert.equal(await store.nextDeliveryAt(false, T0), T0 + 1);

      assert.deepEqual(await claim(store, { now: T0 }), [], 'nothing is due before its mail arrived');
      const claimed = await claim(store);
      assert.deepEqual(
        claimed.map((d) => ({ ...d, id: 0 })),
        [
          {
            id: 0,
            webhookId: hook.id,
            url: 'https://a.example/hook',
            secret: 'whsec_a',
            attempts: 0,
            createdAt: T0 + 1,
            addressId: a.id,
            mail: { id: idA, uuid: withHook.uuid, source: withHook.source, address: a.address, metadata: withHook.metadata, messageId: withHook.messageId, createdAt: T0 + 1 },
          },
          {
            id: 0,
            webhookId: null,
            url: null,
            secret: null,
            attempts: 0,
            createdAt: T0 + 3,
            addressId: b.id,
            mail: { id: idOp, uuid: operatorToo.uuid, source: operatorToo.source, address: b.address, metadata: operatorToo.metadata, messageId: operatorToo.messageId, createdAt: T0 + 3 },
          },
        ],
        'oldest due first; no delivery for the address without a webhook',
      );
      assert.deepEqual(await claim(store, { owner: 'node-b' }), [], 'leased: another claimer gets neither');
      assert.deepEqual(await claim(store, { owner: 'node-b', now: T0 + 1000 + LEASE - 1 }), [], 'still leased a moment before the lease ends');
      assert.equal(await store.nextDeliveryAt(true, T0), T0 + 1000 + LEASE, 'leased ones can be claimed when their lease ends');
      const taken = await claim(store, { owner: 'node-b', now: T0 + 1000 + LEASE });
      assert.deepEqual(
        taken.map((d) => d.mail.uuid),
        [withHook.uuid, operatorToo.uuid],
        'once the lease has run out, another node takes them over',
      );
    },
  ],
  [
    'claimDeliveries: one per webhook at a time, none of the busy webhooks, the operator only when asked, at most limit',
    async (store) => {
      const a = await address(store, 'fair-a@example.com');
      const b = await address(store, 'fair-b@example.com');
      const hookA = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      const hookB = await store.putWebhook(b.id, 'https://b.example/', 'whsec_b', T0);
      const a1 = newMail(a, T0 + 1, { operatorWebhook: true });
      const a2 = newMail(a, T0 + 2, { operatorWebhook: true });
      const b1 = newMail(b, T0 + 3);
      await store.insertMails([a1, a2, b1]);
      assert.deepEqual(
        (await claim(store, { operator: false, busyWebhooks: [hookB.id] })).map((d) => [d.webhookId, d.mail.uuid]),
        [[hookA.id, a1.uuid]],
        "a's first only (its second waits for it), none of b's (busy), no operator delivery",
      );
      assert.deepEqual(
        (await claim(store, { limit: 2 })).map((d) => [d.webhookId, d.mail.uuid]),
        [
          [null, a1.uuid],
          [null, a2.uuid],
        ],
        "the operator's are not one at a time; a's second is still behind its leased first; the limit holds",
      );
      assert.deepEqual(
        (await claim(store)).map((d) => [d.webhookId, d.mail.uuid]),
        [[hookB.id, b1.uuid]],
      );
      assert.deepEqual(await claim(store, { limit: 0 }), []);
    },
  ],
  [
    'finishDelivery: a failed attempt is rescheduled and its lease released; delivered or given up, the delivery leaves the queue; attempts are listed newest first, per address',
    async (store) => {
      const a = await address(store, 'finish-a@example.com');
      const b = await address(store, 'finish-b@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      const hookB = await store.putWebhook(b.id, 'https://b.example/', 'whsec_b', T0);
      const m1 = newMail(a, T0 + 1);
      const m2 = newMail(a, T0 + 2);
      await store.insertMails([m1, m2, newMail(b, T0 + 3)]);
      const [d1] = await claim(store, { busyWebhooks: [hookB.id] });
      assert.equal(d1!.mail.uuid, m1.uuid);
      const failed = attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m1.uuid, outcome: 'failed', status: 500, error: 'The receiver answered 500.', nextAt: T0 + 5000 });
      assert.equal(await store.finishDelivery('node-b', d1!.id, failed), false, 'not the lease holder');
      assert.equal(await store.finishDelivery('node-a', d1!.id, failed), true);
      assert.equal(await store.nextDeliveryAt(false, T0), T0 + 2, 'm2 is due before the retry of m1');
      assert.equal(await store.nextDeliveryAt(false, T0 + 3), T0 + 5000, "past what is due by then (m2, b's mail), the retry of m1 is next");
      const [d2] = await claim(store, { now: T0 + 4999, busyWebhooks: [hookB.id] });
      assert.equal(d2!.mail.uuid, m2.uuid, 'm1 is not due again before its next attempt');
      assert.equal(await store.finishDelivery('node-a', d2!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m2.uuid, at: T0 + 4999 })), true);
      const [again] = await claim(store, { now: T0 + 5000, busyWebhooks: [hookB.id] });
      assert.deepEqual([again!.mail.uuid, again!.attempts], [m1.uuid, 1], 'the retry, with its attempt count');
      const gaveUp = attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m1.uuid, attempt: 2, at: T0 + 5000, outcome: 'gave_up', status: null, error: 'No answer within 5 s.' });
      assert.equal(await store.finishDelivery('node-a', again!.id, gaveUp), true);
      assert.deepEqual(await claim(store, { now: T0 + 10 * LEASE, busyWebhooks: [hookB.id] }), [], 'nothing of a is left');
      assert.equal(await store.finishDelivery('node-a', again!.id, gaveUp), false, 'a finished delivery is gone');

      const listed = await store.listWebhookAttempts(a.id, 10);
      assert.deepEqual(
        listed.map((x) => [x.mailUuid, x.attempt, x.outcome, x.status]),
        [
          [m1.uuid, 2, 'gave_up', null],
          [m1.uuid, 2, 'gave_up', null],
          [m2.uuid, 1, 'delivered', 200],
          [m1.uuid, 1, 'failed', 500],
          [m1.uuid, 1, 'failed', 500],
        ],
        'every attempt recorded, also those whose lease was lost',
      );
      assert.deepEqual(listed[3], failed);
      assert.equal((await store.listWebhookAttempts(a.id, 2)).length, 2, 'limit');
      assert.deepEqual(await store.listWebhookAttempts(b.id, 10), [], "b sees none of a's");
    },
  ],
  [
    "an address's deletion takes its webhook, queued deliveries and attempts; a purged mail's deliveries go with it; deleting the webhook drops its queue and history",
    async (store) => {
      const a = await address(store, 'gone-a@example.com');
      const b = await address(store, 'gone-b@example.com');
      const hookA = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      await store.putWebhook(b.id, 'https://b.example/', 'whsec_b', T0);
      const ma = newMail(a, T0 + 1, { operatorWebhook: true });
      await store.insertMails([ma]);
      const [d] = await claim(store, { operator: false });
      await store.finishDelivery('node-a', d!.id, attempt({ webhookId: hookA.id, addressId: a.id, mailUuid: ma.uuid, outcome: 'failed', status: 503, nextAt: T0 + 2000 }));
      assert.equal((await store.listWebhookAttempts(a.id, 10)).length, 1);
      assert.equal(await store.deleteAddress(a.id), true);
      assert.equal(await store.getWebhook(a.id), undefined);
      assert.deepEqual(await claim(store, { now: T0 + 3000 }), [], "a's deliveries, its own and the operator's, went with its mail");
      assert.deepEqual(await store.listWebhookAttempts(a.id, 10), []);
      assert.equal(
        await store.finishDelivery('node-a', d!.id, attempt({ webhookId: hookA.id, addressId: a.id, mailUuid: ma.uuid })),
        false,
        'an attempt that ends after its address was deleted records nothing and fails nothing',
      );

      const mb = newMail(b, T0 + 10);
      const mOld = newMail(b, T0 - 10);
      await store.insertMails([mb, mOld]);
      await store.purge({ mailBefore: T0, addressBefore: 0, sessionBefore: 0 });
      assert.deepEqual(
        (await claim(store, { now: T0 + 3000 })).map((x) => x.mail.uuid),
        [mb.uuid],
        "the purged mail's delivery is gone",
      );
      const mb2 = newMail(b, T0 + 20);
      await store.insertMails([mb2]);
      assert.equal(await store.deleteWebhook(b.id), true);
      assert.deepEqual(await claim(store, { now: T0 + 10 * LEASE }), [], 'deleting the webhook dropped its queue');
    },
  ],
  [
    "a soft-deleted mail's delivery is still made; pruneWebhooks removes old attempts and stale unleased deliveries",
    async (store) => {
      const a = await address(store, 'prune-a@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      const m = newMail(a, T0 + 1, { operatorWebhook: true });
      await store.insertMails([m]);
      await store.softDeleteMail(a.id, m.uuid);
      const claimed = await claim(store, { operator: false });
      assert.deepEqual(
        claimed.map((d) => d.mail.uuid),
        [m.uuid],
      );
      await store.finishDelivery('node-a', claimed[0]!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m.uuid, at: T0 + 100 }));
      await store.finishDelivery('node-a', claimed[0]!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m.uuid, at: T0 + 200 }));
      assert.deepEqual(await store.pruneWebhooks({ attemptsBefore: T0 + 150, queuedBefore: T0, now: T0 + 1000 }), { attempts: 1, deliveries: 0 });
      assert.deepEqual(
        (await store.listWebhookAttempts(a.id, 10)).map((x) => x.at),
        [T0 + 200],
      );
      assert.equal(await store.nextDeliveryAt(true, T0), T0 + 1, "the operator's delivery is still queued");
      assert.equal(await store.nextDeliveryAt(false, T0), undefined);
      assert.deepEqual(await store.pruneWebhooks({ attemptsBefore: 0, queuedBefore: T0 + 2, now: T0 + 1000 }), { attempts: 0, deliveries: 1 });
      assert.equal(await store.nextDeliveryAt(true, T0), undefined);
    },
  ],
];
