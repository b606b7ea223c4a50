// Each SMTP session's state across its hooks: refused recipients, the transaction's
// deadline, its claim on the in-flight budget, its DATA rate watch and pending delays.
import type { SMTPServerSession } from 'smtp-server';
import type { DataRateWatch } from './data-rate.js';
import type { InflightClaim } from './inflight-budget.js';

export interface SessionState {
  badRecipients: number;
  /** Ends a transaction that outlives transactionTimeoutMs. */
  deadline?: NodeJS.Timeout | undefined;
  claim?: InflightClaim | undefined;
  rate?: DataRateWatch | undefined;
  delays: Set<NodeJS.Timeout>;
}

export interface SessionStates {
  stateOf(session: SMTPServerSession): SessionState;
  /** Ends the transaction: its deadline, its claim and its rate watch. */
  endTransaction(s: SessionState): void;
  /** onClose: the session's transaction and delays end, and it is forgotten. */
  forget(id: string): void;
  /** At close: every session's transaction and delays end. */
  endAll(): void;
}

export function createSessionStates(): SessionStates {
  const sessions = new Map<string, SessionState>();
  const endTransaction = (s: SessionState) => {
    clearTimeout(s.deadline);
    s.deadline = undefined;
    s.claim?.release();
    s.claim = undefined;
    s.rate?.stop();
    s.rate = undefined;
  };
  const end = (s: SessionState) => {
    endTransaction(s);
    for (const t of s.delays) clearTimeout(t);
  };
  return {
    stateOf(session) {
      let s = sessions.get(session.id);
      if (!s) sessions.set(session.id, (s = { badRecipients: 0, delays: new Set() }));
      return s;
    },
    endTransaction,
    forget(id) {
      const s = sessions.get(id);
      if (!s) return;
      end(s);
      sessions.delete(id);
    },
    endAll() {
      for (const s of sessions.values()) end(s);
    },
  };
}
