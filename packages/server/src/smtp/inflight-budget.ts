// One budget for the message bytes held in memory by every unfinished DATA, so
// that many slow or unfinished transactions cannot take the process's memory:
// the transaction of a message that does not fit is ended (421 4.3.1) as it arrives.
export interface InflightBudget {
  /** Bytes held now, by every message together. */
  readonly used: number;
  /** Less than FULL_MARGIN left: a new transaction could not get far. */
  readonly full: boolean;
  /** A claim for one message: take() each chunk before keeping it; release() when done (idempotent). */
  claim(): InflightClaim;
}

export interface InflightClaim {
  /** false when the chunk does not fit: the claim is then over budget and holds nothing. */
  take(bytes: number): boolean;
  readonly overBudget: boolean;
  release(): void;
}

/** What must be left of the budget for a new transaction to start. */
export const FULL_MARGIN = 64 * 1024;

export function createInflightBudget(limit: number): InflightBudget {
  let used = 0;
  return {
    get used() {
      return used;
    },
    get full() {
      return used > limit - FULL_MARGIN;
    },
    claim() {
      let held = 0;
      let over = false;
      const release = () => {
        used -= held;
        held = 0;
      };
      return {
        take(bytes) {
          if (over) return false;
          if (used + bytes > limit) {
            over = true;
            release();
            return false;
          }
          used += bytes;
          held += bytes;
          return true;
        },
        get overBudget() {
          return over;
        },
        release,
      };
    },
  };
}
