// What happens to an address's mail, for push (GET /api/events) and long-poll
// (GET /api/mails/wait). One process: listeners are called in the same turn as the
// change. Several nodes (REDIS_URL set): every event is also published on one Redis
// channel, and each node hands the events of the other nodes to its own listeners,
// so a client streaming from node A hears of mail that node B received.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MailSummary } from '../../storage/store.js';

export type InboxEvent =
  /** A mail was committed (its SMTP 250 is on its way). */
  | { type: 'mail'; mail: MailSummary }
  /** One mail was deleted (DELETE /api/mails/{uuid}). */
  | { type: 'mail_deleted'; uuid: string }
  /** One mail was marked read or unread (PATCH /api/mail/{uuid}). */
  | { type: 'mail_seen'; uuid: string; seen: boolean; mail: MailSummary }
  /** Every mail of the address was deleted (DELETE /api/clear_inbox). */
  | { type: 'inbox_cleared' }
  /** The address itself was deleted; its token no longer works. */
  | { type: 'address_deleted' };

export type InboxListener = (event: InboxEvent) => void;

export interface EventBus {
  publish(addressId: number, event: InboxEvent): void;
  /** Calls listener with every later event of the address; returns the unsubscribe. */
  subscribe(addressId: number, listener: InboxListener): () => void;
  /** Listeners across all addresses (for tests and metrics). */
  listeners(): number;
  close(): Promise<void>;
}

interface Wire {
  /** The publishing node, which has already told its own listeners. */
  n: string;
  a: number;
  e: InboxEvent;
}

export interface EventBusOptions {
  /** A connected client to publish with; a duplicate of it subscribes. */
  redis?: Redis;
  keyPrefix?: string;
  logger?: Logger;
}

export async function createEventBus(opts: EventBusOptions = {}): Promise<EventBus> {
  const byAddress = new Map<number, Set<InboxListener>>();
  let count = 0;

  function dispatch(addressId: number, event: InboxEvent): void {
    const set = byAddress.get(addressId);
    if (!set) return;
    // A listener may unsubscribe itself (or another) while being called.
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (err) {
        opts.logger?.error({ err }, 'event listener failed');
      }
    }
  }

  const node = randomUUID();
  const channel = `${opts.keyPrefix ?? 'ti:'}events`;
  let subscriber: Redis | undefined;
  if (opts.redis) {
    subscriber = opts.redis.duplicate();
    subscriber.on('error', (err) => opts.logger?.warn({ err }, 'redis event subscriber error'));
    if (subscriber.status === 'wait') await subscriber.connect();
    // ioredis re-subscribes by itself after a reconnect.
    await subscriber.subscribe(channel);
    subscriber.on('message', (_channel: string, text: string) => {
      let wire: Wire;
      try {
        wire = JSON.parse(text) as Wire;
      } catch {
        return;
      }
      if (wire.n === node || typeof wire.a !== 'number' || typeof wire.e?.type !== 'string') return;
      dispatch(wire.a, wire.e);
    });
  }

  return {
    publish(addressId, event) {
      dispatch(addressId, event);
      if (!opts.redis) return;
      const wire: Wire = { n: node, a: addressId, e: event };
      // Best effort: a node that cannot reach Redis still tells its own clients, and
      // polling (GET /api/mails) never depends on events.
      opts.redis.publish(channel, JSON.stringify(wire)).catch((err: unknown) => opts.logger?.warn({ err }, 'could not publish an inbox event'));
    },
    subscribe(addressId, listener) {
      let set = byAddress.get(addressId);
      if (!set) byAddress.set(addressId, (set = new Set()));
      set.add(listener);
      count++;
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        count--;
        set.delete(listener);
        if (set.size === 0 && byAddress.get(addressId) === set) byAddress.delete(addressId);
      };
    },
    listeners: () => count,
    async close() {
      byAddress.clear();
      count = 0;
      if (subscriber) await subscriber.quit().catch(() => subscriber!.disconnect());
    },
  };
}
