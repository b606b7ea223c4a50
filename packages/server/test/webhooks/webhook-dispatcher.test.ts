// The webhook dispatcher on its own (webhooks/dispatcher.ts), over a real SQLite store
// and a real receiver, with the dispatcher's clock in the test's hands: what happens
// when time passes between its claim and its look at when the next delivery is due.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store, WebhookStore } from '../../src/storage/store.js';
import { createDispatcher, exponentialBackoff } from '../../src/webhooks/dispatcher.js';
import { dnsLookup } from '../../src/webhooks/guard.js';
import { tmp } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const mail = (addressId: number, address: string, uuid: string, createdAt: number) => ({
  uuid,
  addressId,
  address,
  source: 'a@b.example',
  messageId: `<${uuid}@test>`,
  metadata: JSON.stringify({ subject: uuid, attachments: [] }),
  trace: Buffer.alloc(0),
  body: { raw: Buffer.from(`Subject: ${uuid}\r\n\r\nx\r\n`), attachments: [] },
  createdAt,
});

interface Case {
  store: Store;
  receiver: Receiver;
  /** The test's start; the dispatcher's clock starts there too. */
  T: number;
  /** An address whose webhook POSTs to the receiver. */
  hooked(address: string): Promise<{ id: number; address: string }>;
  /**
   * Starts a dispatcher (its poll, 60 s, far past the case's 5 s: only a wake-up it computed
   * itself delivers in time) whose clock reads `claimAt` until it has asked the store when
   * the next delivery is due, and `thenAt` from then on; `asked` holds what the store answered.
   */
  dispatch(claimAt: number, thenAt: number): { asked: (number | undefined)[]; stop(): Promise<void> };
}

/** A real SQLite store and receiver for one case, both closed after it. */
async function withCase(run: (c: Case) => Promise<void>): Promise<void> {
  const dir = tmp('temp-inbox-dispatcher-');
  dirs.push(dir);
  const store = openSqliteStore(join(dir, 'temp-inbox.sqlite'));
  const receiver = await startReceiver();
  const T = Date.now();
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  receiver.secret = secret;
  try {
    await run({
      store,
      receiver,
      T,
      async hooked(address) {
        const record = (await store.createAddress(address, T))!;
        await store.putWebhook(record.id, receiver.url(), secret, T);
        return record;
      },
      dispatch(claimAt, thenAt) {
        let clock = claimAt;
        const asked: (number | undefined)[] = [];
        const webhookStore: WebhookStore = {
          ...store,
          async nextDeliveryAt(operator, after) {
            const next = await store.nextDeliveryAt(operator, after);
            asked.push(next);
            clock = thenAt;
            return next;
          },
        };
        const dispatcher = createDispatcher({
          store: webhookStore,
          logger: pino({ level: 'silent' }),
          now: () => clock,
          allowPrivate: true,
          timeoutMs: 5000,
          retryForMs: 24 * 3_600_000,
          backoff: exponentialBackoff(),
          timeoutHold: exponentialBackoff(30_000, 1_800_000),
          concurrency: 16,
          leaseMs: 60_000,
          pollMs: 60_000,
          keepAttemptsMs: 7 * 24 * 3_600_000,
          lookup: dnsLookup(),
        });
        return { asked, stop: () => dispatcher.stop() };
      },
    });
  } finally {
    await receiver.stop();
    await store.close();
  }
}

/** Claimed for `leaseMs` by `owner` at `at`, which then never finishes it. */
const leasedBy = async (store: Store, owner: string, at: number, leaseMs: number) =>
  assert.equal((await store.claimDeliveries({ owner, now: at, leaseMs, limit: 10, busyWebhooks: [], operator: false })).length, 1);

describe('webhook dispatcher', () => {
  it("a lease that runs out between the dispatcher's claim and its look at the next due time is taken over at once, not a poll later", () =>
    withCase(async ({ store, receiver, T, hooked, dispatch }) => {
      const orphan = await hooked('orphan@temp-inbox.localhost');
      const uuid = randomUUID();
      await store.insertMails([mail(orphan.id, orphan.address, uuid, T)]);
      // Claimed by a node that then died: its lease runs until T + 700.
      await leasedBy(store, 'dead-node', T, 700);

      // The dispatcher's claim comes at T + 100, with the lease still held; by the time it
      // asks when the next delivery is due, the lease has run out (T + 701).
      const dispatcher = dispatch(T + 100, T + 701);
      try {
        const [post] = await receiver.untilPosts(1, 5000);
        assert.equal(post!.headers['webhook-id'], `msg_${uuid}`);
        assert.equal(post!.verified, true);
        assert.equal(dispatcher.asked[0], T + 700, 'the dispatcher saw the lease end as the next due time');
      } finally {
        await dispatcher.stop();
      }
    }));

  it("a delivery held back by its webhook's attempt on another node does not hide a lease elsewhere that ends sooner", () =>
    withCase(async ({ store, receiver, T, hooked, dispatch }) => {
      const busy = await hooked('busy@temp-inbox.localhost');
      const orphan = await hooked('orphan@temp-inbox.localhost');
      // Webhook "busy": its first mail is in an attempt on a live node for a minute, so its
      // second, due since T, waits for it. Webhook "orphan": its mail was leased by a node
      // that died, until T + 700.
      const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
      await store.insertMails([mail(busy.id, busy.address, first, T)]);
      await leasedBy(store, 'live-node', T, 60_000);
      await store.insertMails([mail(orphan.id, orphan.address, third, T)]);
      await leasedBy(store, 'dead-node', T, 700);
      await store.insertMails([mail(busy.id, busy.address, second, T)]);

      // The dispatcher claims at T + 100 and finds nothing it may take. The next time
      // anything can be claimed is the dead node's lease end, T + 700: the clock is there
      // once the dispatcher has asked.
      const dispatcher = dispatch(T + 100, T + 700);
      try {
        const [post] = await receiver.untilPosts(1, 5000);
        assert.equal(post!.headers['webhook-id'], `msg_${third}`, "the orphan's delivery, not the held-back one");
        assert.equal(dispatcher.asked[0], T + 700);
      } finally {
        await dispatcher.stop();
      }
    }));
});
