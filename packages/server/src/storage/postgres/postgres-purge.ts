// Retention (store.ts PurgeStore) in PostgreSQL: one transaction removes what is past its time.
import type { PurgeResult, PurgeStore } from '../store.js';
import { PG_PUT_TOMBSTONES } from './postgres-addresses.js';
import { query as q, type Transaction } from './postgres-connection.js';

export function postgresPurgeStore(transaction: Transaction): PurgeStore {
  return {
    async purge(c) {
      return transaction(async (client): Promise<PurgeResult> => {
        // Addresses first: their mail goes with them through ON DELETE CASCADE
        // (and, as in SQLite, is not counted in `mails`).
        // A sandbox's address stays as long as the sandbox, and its mail for the sandbox's own retention.
        // Each claimed address purged leaves its tombstone (not one the catch-all made and nobody took).
        const gone = await q<{ address: string; unclaimed: boolean }>(
          client,
          'DELETE FROM addresses WHERE created_at < $1 AND id NOT IN (SELECT address_id FROM sandboxes) RETURNING address, unclaimed',
          [c.addressBefore],
        );
        const addresses = gone.rowCount ?? 0;
        const marks = c.tombstones;
        if (marks) {
          const keys = gone.rows.filter((a) => !a.unclaimed).map((a) => marks.keyOf(a.address));
          if (keys.length > 0) await q(client, PG_PUT_TOMBSTONES, [keys, marks.at]);
        }
        let mails =
          (await q(client, 'DELETE FROM mails WHERE (created_at < $1 AND address_id NOT IN (SELECT address_id FROM sandboxes)) OR deleted_at IS NOT NULL', [c.mailBefore])).rowCount ?? 0;
        if (c.now !== undefined) {
          mails += (await q(client, 'DELETE FROM mails m USING sandboxes s WHERE m.address_id = s.address_id AND m.created_at < $1 - s.retention_ms', [c.now])).rowCount ?? 0;
        }
        const sessions = (await q(client, 'DELETE FROM sessions WHERE created_at < $1', [c.sessionBefore])).rowCount ?? 0;
        return { mails, addresses, sessions };
      });
    },
  };
}
