// Counts what is open per key (a client, an address) against a cap: SMTP
// connections per client, event streams and waits per client and per address.
export interface OpenCounter {
  /** Counts one more for `key`; false when the key is at its cap. The returned release is idempotent. */
  admit(key: string): (() => void) | false;
  open(key: string): number;
}

export function createOpenCounter(max: number): OpenCounter {
  const open = new Map<string, number>();
  return {
    admit(key) {
      const n = open.get(key) ?? 0;
      if (n >= max) return false;
      open.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      };
    },
    open: (key) => open.get(key) ?? 0,
  };
}
