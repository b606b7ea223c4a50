// One budget for the message bytes held in memory by every unfinished DATA, so
// that many slow or unfinished transactions cannot take the process's memory:
// the transaction of a message that does not fit is ended (421 4.3.1) as it arrives.
// Each client (clientKey: an IPv4 address, an IPv6 /64) has a share of it, so that
// a few clients holding unfinished messages leave the rest for everyone else
// (421 4.7.0 for the one past its share); a trusted client has no share of its own.
export interface InflightBudget {
  /** Bytes held now, by every message together. */
  readonly used: number;
  /** Less than FULL_MARGIN left: a new transaction could not get far. */
  readonly full: boolean;
  /** Less than FULL_MARGIN left of this client's share. */
  clientFull(client: string): boolean;
  /** A claim for one message of `client` (undefined: no share, only the whole budget): take() each chunk before keeping it; release() when done (idempotent). */
  claim(client?: string): InflightClaim;
}

export interface InflightClaim {
  /** false when the chunk does not fit: the claim is then over budget and holds nothing. */
  take(bytes: number): boolean;
  readonly overBudget: boolean;
  /** What it did not fit: the whole budget, or the client's share. */
  readonly over: 'budget' | 'share' | undefined;
  release(): void;
}

/** What must be left of the budget for a new transaction to start. */
export const FULL_MARGIN = 64 * 1024;

export function createInflightBudget(limit: number, perClient = limit): InflightBudget {
  let used = 0;
  const byClient = new Map<string, number>();
  const add = (client: string | undefined, bytes: number) => {
    used += bytes;
    if (client === undefined) return;
    const n = (byClient.get(client) ?? 0) + bytes;
    if (n > 0) byClient.set(client, n);
    else byClient.delete(client);
  };
  return {
    get used() {
      return used;
    },
    get full() {
      return used > limit - FULL_MARGIN;
    },
    clientFull(client) {
      return (byClient.get(client) ?? 0) > perClient - FULL_MARGIN;
    },
    claim(client) {
      let held = 0;
      let over: 'budget' | 'share' | undefined;
      const release = () => {
        add(client, -held);
        held = 0;
      };
      return {
        take(bytes) {
          if (over) return false;
          if (used + bytes > limit) over = 'budget';
          else if (client !== undefined && (byClient.get(client) ?? 0) + bytes > perClient) over = 'share';
          if (over) {
            release();
            return false;
          }
          add(client, bytes);
          held += bytes;
          return true;
        },
        get overBudget() {
          return over !== undefined;
        },
        get over() {
          return over;
        },
        release,
      };
    },
  };
}
