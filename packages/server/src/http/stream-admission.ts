// What is open of the long-lived requests (GET /api/events, GET /api/mails/wait, the
// mail.tm API's Mercure stream), per client, per address and in all (EVENTS_PER_*), and
// how to end each at shutdown. One for the whole app, so that every kind of stream counts
// against the same caps.
import type { EventsConfig } from '../config/index.js';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { createOpenCounter } from '../limits/open-counter.js';
import type { Metrics } from '../observability/metrics.js';
import { clientKey } from './rate-limit.js';

export interface StreamAdmission {
  /**
   * Counts one more open stream or wait for the request's client and the address (429 past
   * a per-client or per-address cap, 503 past the node's or while shutting down); the
   * returned function releases it (once, however often it is called).
   */
  admit(request: FastifyRequest, addressId: number, kind: 'stream' | 'wait'): () => void;
  /** Registers how to end an open stream or wait when the server closes; returns the unregister. */
  onClose(end: () => void): () => void;
  /** Ends every open stream and wait, and refuses new ones. */
  close(): void;
}

export function createStreamAdmission(
  config: Pick<EventsConfig, 'perClient' | 'perAddress' | 'perNode'>,
  metrics?: Metrics,
): StreamAdmission {
  const { perClient: eventsPerClient, perAddress: eventsPerAddress, perNode: eventsPerNode } = config;
  const perClient = createOpenCounter(eventsPerClient);
  const perAddress = createOpenCounter(eventsPerAddress);
  let openTotal = 0;
  const open = { stream: 0, wait: 0 };
  const enders = new Set<() => void>();
  let closing = false;
  metrics?.trackOpen(() => ({ streams: open.stream, waits: open.wait }));

  return {
    admit(request, addressId, kind) {
      if (closing) throw new AppError('unavailable', 'The server is shutting down; reconnect in a moment.', 1);
      if (openTotal >= eventsPerNode) throw new AppError('unavailable', 'Too many open event streams on this server; retry later.', 5);
      const client = perClient.admit(clientKey(request.ip));
      if (!client) throw new AppError('rate_limited', `At most ${eventsPerClient} event streams and waits may be open from one client; close one first.`, 5);
      const address = perAddress.admit(String(addressId));
      if (!address) {
        client();
        throw new AppError('rate_limited', `At most ${eventsPerAddress} event streams and waits may be open on one address; close one first.`, 5);
      }
      openTotal++;
      open[kind]++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        openTotal--;
        open[kind]--;
        client();
        address();
      };
    },
    onClose(end) {
      enders.add(end);
      return () => enders.delete(end);
    },
    close() {
      closing = true;
      for (const end of [...enders]) end();
    },
  };
}
