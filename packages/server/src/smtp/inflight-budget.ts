// One budget for the message bytes held in memory by every unfinished DATA, so
// that many slow or unfinished transactions cannot take the process's memory:
// a message that does not fit is dropped as it arrives and answered 452 4.3.1.
export interface InflightBudget {
  /** Bytes held now, by every message together. */
  readonly used: number;
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

export function createInflightBudget(limit: number): InflightBudget {
  let used = 0;
  return {
    get used() {
      return used;
    },
    get full() {
      return used >= limit;
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
