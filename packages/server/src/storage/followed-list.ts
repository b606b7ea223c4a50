// A small list every node keeps in memory and follows in the database (the operators'
// blocks, the domain pool): when it is older than `refreshMs` the next use reads the
// list's version (one small query), and the whole list only when that version moved. A
// change made through this node calls reload(), so its answer comes after this node applies
// it; other nodes apply it within refreshMs. Nothing needs Redis, and no announcement can
// be missed. A failed read keeps the last list in force and is tried again after refreshMs.
import type { Logger } from 'pino';

export interface FollowedListOptions<T> {
  /** A token that changes whenever the list does (by any process). */
  version: () => Promise<string>;
  read: () => Promise<T>;
  /** The value before the first read. */
  initial: T;
  refreshMs: number;
  /** What the log lines call the list ("the blocks"). */
  what: string;
  logger?: Logger | undefined;
  /** Measures the list's age: monotonic by default, whatever the service's idea of the time. */
  clock?: () => number;
}

export interface FollowedList<T> {
  /** The list, read again first when it is older than refreshMs. */
  fresh(): Promise<T>;
  /** Reads the list again (after a change made through this node); resolves once uses see it. */
  reload(): Promise<void>;
  /** The list as last read, without asking the database (for a caller that must not wait). */
  current(): T;
}

export function followList<T>(opts: FollowedListOptions<T>): FollowedList<T> {
  const now = opts.clock ?? (() => performance.now());
  let value = opts.initial;
  let version: string | undefined;
  let checkedAt = -Infinity;
  let failing = false;
  /** The load running now, and the one queued behind it (shared by every caller until it starts). */
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  async function load(): Promise<void> {
    try {
      const current = await opts.version();
      if (current !== version) {
        value = await opts.read();
        version = current;
      }
      if (failing) opts.logger?.info(`${opts.what} read again from the database`);
      failing = false;
    } catch (err) {
      if (!failing) opts.logger?.warn({ err }, `could not read ${opts.what} from the database; using the last list read`);
      failing = true;
    } finally {
      checkedAt = now();
    }
  }

  /** A load that starts after this call (so it sees every change committed before it). */
  function loadAfter(): Promise<void> {
    if (queued) return queued;
    const start = async () => {
      await running;
      queued = undefined;
      const mine = load();
      running = mine;
      await mine;
      if (running === mine) running = undefined;
    };
    queued = start();
    return queued;
  }

  return {
    async fresh() {
      if (now() - checkedAt >= opts.refreshMs) await (running ?? loadAfter());
      return value;
    },
    reload: loadAfter,
    current: () => value,
  };
}
