// The storage contract's webhook cases (store.ts WebhookStore; docs/decisions.md
// "Webhooks"), run by store-contract.ts against every backend with its other cases:
// webhooks per address, deliveries queued by insertMails in the mail's transaction, claims
// with a lease (never the same delivery twice while it lasts, one per webhook on every
// claimer, webhooks taking turns, a hold after time-outs, the attempt counted when
// claimed, the busy ones and the operator's left out on request), attempts recorded,
// pruning, and what goes when an address, a mail or a webhook does.
import assert from 'node:assert/strict';
import type { Store, WebhookAttempt } from '../../src/storage/store.js';
import { address, newMail, T0 } from './store-fixtures.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const LEASE = 60_000;
/** A webhook released with no hold. */
const FREE = { notBefore: 0, timeouts: 0 };

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
            timeouts: 0,
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
            timeouts: 0,
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
        "once the lease has run out, another node takes them over (a's webhook and the operator's both served at the first claim: by due time)",
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
      const second = await claim(store, { limit: 2 });
      assert.deepEqual(
        second.map((d) => [d.webhookId, d.mail.uuid]),
        [
          [hookB.id, b1.uuid],
          [null, a1.uuid],
        ],
        "b (set at T0, never served) before the operator's (due at T0 + 1); a's second is still behind its leased first; the limit holds",
      );
      assert.deepEqual(await claim(store, { owner: 'node-b' }), [], "the operator's one at a time too, on any claimer: a2 waits for a1's attempt");
      assert.equal(await store.finishDelivery('node-a', second[1]!.id, attempt({ webhookId: null, addressId: a.id, mailUuid: a1.uuid }), FREE), true);
      assert.deepEqual(
        (await claim(store, { owner: 'node-b' })).map((d) => [d.webhookId, d.mail.uuid]),
        [[null, a2.uuid]],
        "a1's attempt to the operator finished: its next, on any claimer",
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
      assert.equal(await store.finishDelivery('node-b', d1!.id, failed, FREE), false, 'not the lease holder');
      assert.equal(await store.finishDelivery('node-a', d1!.id, failed, FREE), true);
      assert.equal(await store.nextDeliveryAt(false, T0), T0 + 2, 'm2 is due before the retry of m1');
      assert.equal(await store.nextDeliveryAt(false, T0 + 3), T0 + 5000, "past what is due by then (m2, b's mail), the retry of m1 is next");
      const [d2] = await claim(store, { now: T0 + 4999, busyWebhooks: [hookB.id] });
      assert.equal(d2!.mail.uuid, m2.uuid, 'm1 is not due again before its next attempt');
      assert.equal(await store.finishDelivery('node-a', d2!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m2.uuid, at: T0 + 4999 }), FREE), true);
      const [again] = await claim(store, { now: T0 + 5000, busyWebhooks: [hookB.id] });
      assert.deepEqual([again!.mail.uuid, again!.attempts], [m1.uuid, 1], 'the retry, with its attempt count');
      const gaveUp = attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m1.uuid, attempt: 2, at: T0 + 5000, outcome: 'gave_up', status: null, error: 'No answer within 5 s.' });
      assert.equal(await store.finishDelivery('node-a', again!.id, gaveUp, FREE), true);
      assert.deepEqual(await claim(store, { now: T0 + 10 * LEASE, busyWebhooks: [hookB.id] }), [], 'nothing of a is left');
      assert.equal(await store.finishDelivery('node-a', again!.id, gaveUp, FREE), false, 'a finished delivery is gone');

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
      await store.finishDelivery('node-a', d!.id, attempt({ webhookId: hookA.id, addressId: a.id, mailUuid: ma.uuid, outcome: 'failed', status: 503, nextAt: T0 + 2000 }), FREE);
      assert.equal((await store.listWebhookAttempts(a.id, 10)).length, 1);
      assert.equal(await store.deleteAddress(a.id), true);
      assert.equal(await store.getWebhook(a.id), undefined);
      assert.deepEqual(await claim(store, { now: T0 + 3000 }), [], "a's deliveries, its own and the operator's, went with its mail");
      assert.deepEqual(await store.listWebhookAttempts(a.id, 10), []);
      assert.equal(
        await store.finishDelivery('node-a', d!.id, attempt({ webhookId: hookA.id, addressId: a.id, mailUuid: ma.uuid }), FREE),
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
      await store.finishDelivery('node-a', claimed[0]!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m.uuid, at: T0 + 100 }), FREE);
      await store.finishDelivery('node-a', claimed[0]!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m.uuid, at: T0 + 200 }), FREE);
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
  [
    'claimDeliveries: webhooks take turns, the one served longest ago first, not the oldest delivery first',
    async (store) => {
      const [a, b, c] = [await address(store, 'turn-a@example.com'), await address(store, 'turn-b@example.com'), await address(store, 'turn-c@example.com')];
      await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      await store.putWebhook(b.id, 'https://b.example/', 'whsec_b', T0);
      await store.putWebhook(c.id, 'https://c.example/', 'whsec_c', T0 + 1);
      // a has a backlog of three older mails; b and c one newer mail each.
      const [a1, a2, a3] = [newMail(a, T0 + 1), newMail(a, T0 + 2), newMail(a, T0 + 3)];
      const [b1, c1] = [newMail(b, T0 + 10), newMail(c, T0 + 20)];
      await store.insertMails([a1, a2, a3, b1, c1]);
      const order: string[] = [];
      for (let at = T0 + 1000; order.length < 5; at += 1000) {
        const got = await claim(store, { now: at, limit: 1, operator: false });
        assert.equal(got.length, 1, `one due at ${at - T0}`);
        order.push(got[0]!.mail.uuid);
        await store.finishDelivery('node-a', got[0]!.id, attempt({ webhookId: got[0]!.webhookId, addressId: got[0]!.addressId, mailUuid: got[0]!.mail.uuid, at }), FREE);
      }
      const name = new Map([a1, a2, a3, b1, c1].map((m, i) => [m.uuid, ['a1', 'a2', 'a3', 'b1', 'c1'][i]!]));
      assert.deepEqual(
        order.map((u) => name.get(u)),
        ['a1', 'b1', 'c1', 'a2', 'a3'],
        "a's backlog waits its turn: after a1, b and c (served longer ago) go first",
      );
    },
  ],
  [
    "claimDeliveries: while a webhook's attempt is leased to one claimer, no claimer gets another of its deliveries; finishDelivery releases it, and a hold after a time-out keeps it back until its end",
    async (store) => {
      const a = await address(store, 'held-a@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      const [m1, m2] = [newMail(a, T0 + 1), newMail(a, T0 + 2)];
      await store.insertMails([m1, m2]);
      const [d1] = await claim(store, { operator: false });
      assert.equal(d1!.mail.uuid, m1.uuid);
      assert.deepEqual(await claim(store, { owner: 'node-b', operator: false }), [], "m2 waits for m1's attempt, on any node");
      assert.equal(await store.nextDeliveryAt(false, T0 + 1000), T0 + 1000 + LEASE, "m2 can be claimed when m1's lease ends");
      const timedOut = attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m1.uuid, outcome: 'failed', status: null, error: 'No answer within 5 s.', nextAt: T0 + 50_000 });
      assert.equal(await store.finishDelivery('node-a', d1!.id, timedOut, { notBefore: T0 + 50_000, timeouts: 1 }), true);
      assert.deepEqual(await claim(store, { owner: 'node-b', now: T0 + 49_999, operator: false }), [], 'held: neither m2 nor the retry of m1');
      assert.equal(await store.nextDeliveryAt(false, T0 + 1000), T0 + 50_000, 'the hold ends then');
      const [d2] = await claim(store, { owner: 'node-b', now: T0 + 50_000, operator: false });
      assert.deepEqual([d2!.mail.uuid, d2!.timeouts], [m2.uuid, 1], 'after the hold, the earliest due, with the time-outs so far');
      assert.equal(await store.finishDelivery('node-a', d2!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m2.uuid }), FREE), false, 'not the holder');
      assert.deepEqual(await claim(store, { now: T0 + 50_001, operator: false }), [], "node-a's finish did not release node-b's lease");
      assert.equal(await store.finishDelivery('node-b', d2!.id, attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m2.uuid }), FREE), true);
      const [d3] = await claim(store, { now: T0 + 50_001, operator: false });
      assert.deepEqual([d3!.mail.uuid, d3!.attempts, d3!.timeouts], [m1.uuid, 1, 0], 'released: the retry of m1, its time-outs in a row reset');
    },
  ],
  [
    'claimDeliveries counts the attempt when it claims: a delivery whose attempt never finished comes back once its lease ends, leased twice as long each time',
    async (store) => {
      const a = await address(store, 'crash-a@example.com');
      const hook = await store.putWebhook(a.id, 'https://a.example/', 'whsec_a', T0);
      const m = newMail(a, T0 + 1);
      await store.insertMails([m]);
      let at = T0 + 1000;
      for (let n = 0; n < 4; n++) {
        const [d] = await claim(store, { owner: `node-${n}`, now: at, operator: false });
        assert.deepEqual([d?.mail.uuid, d?.attempts], [m.uuid, n], `claim ${n + 1}: the attempts started before it`);
        // Its node dies in the attempt: nothing is recorded, and the lease runs LEASE * 2^n.
        const ends = at + LEASE * 2 ** n;
        assert.equal(await store.nextDeliveryAt(false, at), ends);
        assert.deepEqual(await claim(store, { owner: 'other', now: ends - 1, operator: false }), [], 'not before its lease ends');
        at = ends;
      }
      const [d] = await claim(store, { now: at, operator: false });
      assert.equal(d!.attempts, 4);
      const failed = attempt({ webhookId: hook.id, addressId: a.id, mailUuid: m.uuid, attempt: 5, at, outcome: 'failed', status: 500, nextAt: at + 10 });
      assert.equal(await store.finishDelivery('node-a', d!.id, failed, FREE), true);
      const [again] = await claim(store, { now: at + 10, operator: false });
      assert.equal(again!.attempts, 5, 'a finished attempt is not counted twice');
    },
  ],
];
