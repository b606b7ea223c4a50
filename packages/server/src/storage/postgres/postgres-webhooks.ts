// Webhooks in PostgreSQL (store.ts WebhookStore), as sqlite-webhooks.ts does in SQLite.
// Several nodes claim from one outbox: a claim locks the rows it picks with FOR UPDATE
// SKIP LOCKED and leases them in the same statement, so two nodes never take the same
// delivery, and neither waits for the other. Deliveries are queued by postgres-store.ts's
// insertMails through queueWebhooks, in the mail's own transaction. BIGINT columns
// arrive from pg as strings and are converted here.
import type pg from 'pg';
import type { ClaimedDelivery, WebhookAttempt, WebhookOutcome, WebhookRecord, WebhookStore } from '../store.js';

interface WebhookRow {
  id: string;
  address_id: string;
  url: string;
  secret: string;
  created_at: string;
}

interface ClaimedRow {
  id: string;
  webhook_id: string | null;
  url: string | null;
  secret: string | null;
  attempts: number;
  created_at: string;
  mail_id: string;
  uuid: string;
  source: string;
  address: string;
  address_id: string;
  metadata: string;
  message_id: string;
  mail_created_at: string;
}

interface AttemptRow {
  webhook_id: string | null;
  address_id: string;
  mail_uuid: string;
  url: string;
  attempt: number;
  at: string;
  outcome: WebhookOutcome;
  status: number | null;
  duration_ms: number;
  error: string | null;
  next_at: string | null;
}

const toWebhook = (r: WebhookRow): WebhookRecord => ({ id: Number(r.id), addressId: Number(r.address_id), url: r.url, secret: r.secret, createdAt: Number(r.created_at) });

const toAttempt = (r: AttemptRow): WebhookAttempt => ({
  webhookId: r.webhook_id === null ? null : Number(r.webhook_id),
  addressId: Number(r.address_id),
  mailUuid: r.mail_uuid,
  url: r.url,
  attempt: r.attempt,
  at: Number(r.at),
  outcome: r.outcome,
  status: r.status,
  durationMs: r.duration_ms,
  error: r.error,
  nextAt: r.next_at === null ? null : Number(r.next_at),
});

const toClaimed = (r: ClaimedRow): ClaimedDelivery => ({
  id: Number(r.id),
  webhookId: r.webhook_id === null ? null : Number(r.webhook_id),
  url: r.url,
  secret: r.secret,
  attempts: r.attempts,
  createdAt: Number(r.created_at),
  addressId: Number(r.address_id),
  mail: { id: Number(r.mail_id), uuid: r.uuid, source: r.source, address: r.address, metadata: r.metadata, messageId: r.message_id, createdAt: Number(r.mail_created_at) },
});

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * Queues the deliveries of mails just inserted (inside insertMails' transaction): one per
 * mail whose address has a webhook, and one per mail in `operatorIds` for the operator's.
 * Answers how many it queued.
 */
export async function queueWebhooks(client: Queryable, mailIds: number[], operatorIds: number[]): Promise<number> {
  const r = await client.query(
    'INSERT INTO webhook_outbox (webhook_id, mail_id, created_at, next_at) ' +
      'SELECT w.id, m.id, m.created_at, m.created_at FROM mails m JOIN webhooks w ON w.address_id = m.address_id WHERE m.id = ANY($1::bigint[]) ' +
      'UNION ALL SELECT NULL, m.id, m.created_at, m.created_at FROM mails m WHERE m.id = ANY($2::bigint[])',
    [mailIds, operatorIds],
  );
  return r.rowCount ?? 0;
}

// $1 owner, $2 lease until, $3 now, $4 operator, $5 limit, $6 busy webhook ids.
const DUE = 'next_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)';
const CLAIM =
  'WITH picked AS (' +
  '  SELECT id FROM webhook_outbox WHERE id IN (' +
  '    SELECT id FROM (' +
  `      SELECT id, webhook_id, next_at, row_number() OVER (PARTITION BY webhook_id ORDER BY next_at, id) AS rn FROM webhook_outbox o WHERE ${DUE} ` +
  '        AND (webhook_id IS NOT NULL OR $4::boolean) AND (webhook_id IS NULL OR (NOT (webhook_id = ANY($6::bigint[])) ' +
  // One in flight per webhook, on any node (two nodes claiming at the same instant may each take one).
  '        AND NOT EXISTS (SELECT 1 FROM webhook_outbox l WHERE l.webhook_id = o.webhook_id AND l.lease_until > $3)))' +
  '    ) due WHERE rn = 1 OR webhook_id IS NULL ORDER BY next_at, id LIMIT $5' +
  // Checked again on the row as locked: another node may have leased it since this statement's snapshot.
  `  ) AND ${DUE} FOR UPDATE SKIP LOCKED` +
  '), claimed AS (' +
  '  UPDATE webhook_outbox o SET lease_owner = $1, lease_until = $2 FROM picked WHERE o.id = picked.id RETURNING o.id, o.webhook_id, o.mail_id, o.attempts, o.created_at, o.next_at' +
  ') SELECT c.id, c.webhook_id, w.url, w.secret, c.attempts, c.created_at, m.id AS mail_id, m.uuid, m.source, m.address, m.address_id, m.metadata, m.message_id, ' +
  'm.created_at AS mail_created_at FROM claimed c JOIN mails m ON m.id = c.mail_id LEFT JOIN webhooks w ON w.id = c.webhook_id ORDER BY c.next_at, c.id';

// One statement, so the attempt and the queue change commit together. The attempt is kept
// only while its address (and webhook) exist: a deletion during the attempt took its history.
const FINISH = (failed: boolean) =>
  'WITH done AS (' +
  (failed
    ? 'UPDATE webhook_outbox SET attempts = attempts + 1, next_at = $12, lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2 RETURNING id'
    : 'DELETE FROM webhook_outbox WHERE id = $1 AND lease_owner = $2 RETURNING id') +
  '), recorded AS (' +
  '  INSERT INTO webhook_attempts (webhook_id, address_id, mail_uuid, url, attempt, at, outcome, status, duration_ms, error, next_at) ' +
  '  SELECT $3::bigint, $4::bigint, $5, $6, $7, $8, $9, $10, $11, $13, $12 ' +
  '  WHERE EXISTS (SELECT 1 FROM addresses WHERE id = $4::bigint) AND ($3::bigint IS NULL OR EXISTS (SELECT 1 FROM webhooks WHERE id = $3::bigint)) RETURNING id' +
  ') SELECT (SELECT count(*) FROM done) AS held';

const FOREIGN_KEY_VIOLATION = '23503';

export function postgresWebhookStore(pool: pg.Pool): WebhookStore {
  return {
    async putWebhook(addressId, url, secret, createdAt) {
      const { rows } = await pool.query<WebhookRow>(
        'INSERT INTO webhooks (address_id, url, secret, created_at) VALUES ($1, $2, $3, $4) ' +
          'ON CONFLICT (address_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, created_at = excluded.created_at RETURNING id, address_id, url, secret, created_at',
        [addressId, url, secret, createdAt],
      );
      return toWebhook(rows[0]!);
    },
    async getWebhook(addressId) {
      const { rows } = await pool.query<WebhookRow>('SELECT id, address_id, url, secret, created_at FROM webhooks WHERE address_id = $1', [addressId]);
      return rows[0] && toWebhook(rows[0]);
    },
    async deleteWebhook(addressId) {
      const { rowCount } = await pool.query('DELETE FROM webhooks WHERE address_id = $1', [addressId]);
      return (rowCount ?? 0) > 0;
    },
    async claimDeliveries(c) {
      if (c.limit <= 0) return [];
      const { rows } = await pool.query<ClaimedRow>(CLAIM, [c.owner, c.now + c.leaseMs, c.now, c.operator, c.limit, c.busyWebhooks]);
      return rows.map(toClaimed);
    },
    async finishDelivery(owner, deliveryId, a) {
      const params = [deliveryId, owner, a.webhookId, a.addressId, a.mailUuid, a.url, a.attempt, a.at, a.outcome, a.status, a.durationMs, a.nextAt, a.error];
      try {
        const { rows } = await pool.query<{ held: string }>(FINISH(a.outcome === 'failed'), params);
        return Number(rows[0]!.held) > 0;
      } catch (err) {
        // The address or webhook was deleted between the check and the insert: the delivery went with it.
        if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
        throw err;
      }
    },
    async nextDeliveryAt(operator, after) {
      const { rows } = await pool.query<{ at: string | null }>(
        'SELECT min(due) AS at FROM (SELECT greatest(next_at, coalesce(lease_until, 0)) AS due FROM webhook_outbox WHERE webhook_id IS NOT NULL OR $1::boolean) o WHERE due > $2',
        [operator, after],
      );
      return rows[0]?.at == null ? undefined : Number(rows[0].at);
    },
    async listWebhookAttempts(addressId, limit) {
      const { rows } = await pool.query<AttemptRow>(
        'SELECT a.webhook_id, a.address_id, a.mail_uuid, a.url, a.attempt, a.at, a.outcome, a.status, a.duration_ms, a.error, a.next_at ' +
          'FROM webhook_attempts a WHERE a.webhook_id = (SELECT id FROM webhooks WHERE address_id = $1) ORDER BY a.id DESC LIMIT $2',
        [addressId, limit],
      );
      return rows.map(toAttempt);
    },
    async pruneWebhooks(c) {
      const attempts = await pool.query('DELETE FROM webhook_attempts WHERE at < $1', [c.attemptsBefore]);
      const deliveries = await pool.query('DELETE FROM webhook_outbox WHERE created_at < $1 AND (lease_until IS NULL OR lease_until <= $2)', [c.queuedBefore, c.now]);
      return { attempts: attempts.rowCount ?? 0, deliveries: deliveries.rowCount ?? 0 };
    },
  };
}
