// Webhooks in PostgreSQL (store.ts WebhookStore), as sqlite-webhooks.ts does in SQLite.
// Several nodes claim from one outbox: a claim, one transaction, locks the webhooks it
// picks (the operator's WEBHOOK_URL through webhook_operator's one row) and their
// deliveries with FOR UPDATE SKIP LOCKED (each checked again as locked) and leases them,
// so two nodes never take the same delivery nor start two attempts to one webhook or to
// the operator's, and neither waits for the other. Deliveries are queued by postgres-store.ts's
// insertMails through queueWebhooks, in the mail's own transaction. BIGINT columns
// arrive from pg as strings and are converted here.
import type pg from 'pg';
import type { ClaimedDelivery, MailEnvelope, WebhookAttempt, WebhookOutcome, WebhookRecord, WebhookRelease, WebhookStore } from '../store.js';
import { inTransaction } from './postgres-connection.js';

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
  timeouts: number | null;
  created_at: string;
  mail_id: string;
  uuid: string;
  source: string;
  address: string;
  address_id: string;
  metadata: string;
  message_id: string;
  envelope: string | null;
  mail_created_at: string;
  report_summary: string | null;
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
  // Counted when claimed: the attempts before this one.
  attempts: r.attempts - 1,
  timeouts: r.timeouts ?? 0,
  createdAt: Number(r.created_at),
  addressId: Number(r.address_id),
  mail: {
    id: Number(r.mail_id),
    uuid: r.uuid,
    source: r.source,
    address: r.address,
    metadata: r.metadata,
    messageId: r.message_id,
    createdAt: Number(r.mail_created_at),
    ...(r.envelope ? { envelope: JSON.parse(r.envelope) as MailEnvelope } : {}),
    ...(r.report_summary !== null ? { reportSummary: r.report_summary } : {}),
  },
});

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * Queues the deliveries of mails just inserted (inside insertMails' transaction): one per
 * mail whose address has a webhook, and one per mail in `operatorIds` for the operator's,
 * each first due at its mail's `dueAt` (aligned with mailIds; null: when the mail arrived).
 * Answers how many it queued.
 */
export async function queueWebhooks(client: Queryable, mailIds: number[], operatorIds: number[], dueAt: (number | null)[]): Promise<number> {
  const r = await client.query(
    'WITH d AS (SELECT * FROM unnest($1::bigint[], $3::bigint[]) AS d (id, due)) ' +
      'INSERT INTO webhook_outbox (webhook_id, mail_id, created_at, next_at) ' +
      'SELECT w.id, m.id, m.created_at, coalesce(d.due, m.created_at) FROM d JOIN mails m ON m.id = d.id JOIN webhooks w ON w.address_id = m.address_id ' +
      'UNION ALL SELECT NULL, m.id, m.created_at, coalesce(d.due, m.created_at) FROM d JOIN mails m ON m.id = d.id WHERE d.id = ANY($2::bigint[])',
    [mailIds, operatorIds, dueAt],
  );
  return r.rowCount ?? 0;
}

// The outbox with each delivery's webhook, or for the operator's (webhook_id NULL) its row.
const OUTBOX = 'webhook_outbox o LEFT JOIN webhooks w ON w.id = o.webhook_id LEFT JOIN webhook_operator op ON op.id = 1 AND o.webhook_id IS NULL';

// $1 now, $2 operator, $3 busy webhook ids, $4 limit. Each webhook's earliest due delivery
// (the operator's, all in the one NULL partition, as one webhook), in turns: the webhook
// served longest ago first. Read without locks; what it picks is locked and checked below.
const PICK =
  'SELECT id, webhook_id FROM (' +
  '  SELECT o.id, o.webhook_id, o.next_at, coalesce(w.served_at, op.served_at, o.next_at) AS turn, row_number() OVER (PARTITION BY o.webhook_id ORDER BY o.next_at, o.id) AS rn ' +
  `  FROM ${OUTBOX} ` +
  '  WHERE o.next_at <= $1 AND (o.lease_until IS NULL OR o.lease_until <= $1) ' +
  '    AND (CASE WHEN o.webhook_id IS NULL THEN $2::boolean AND op.not_before <= $1 ELSE w.not_before <= $1 AND NOT (o.webhook_id = ANY($3::bigint[])) END)' +
  ') due WHERE rn = 1 ORDER BY turn, next_at, id LIMIT $4';

// The picked webhooks still free (checked again on the row as locked: another node may have
// leased it since), in id order; one another claim holds is skipped, not waited for. NO KEY:
// a mail's transaction queueing a delivery (its foreign key's KEY SHARE lock) is not held up.
const LOCK_HOOKS = 'SELECT id FROM webhooks WHERE id = ANY($1::bigint[]) AND not_before <= $2::bigint ORDER BY id FOR NO KEY UPDATE SKIP LOCKED';
// The operator's row, as LOCK_HOOKS a webhook's: no row, and its delivery is not taken.
const LOCK_OPERATOR = 'SELECT id FROM webhook_operator WHERE id = 1 AND not_before <= $1::bigint FOR NO KEY UPDATE SKIP LOCKED';

// $1 owner, $2 now, $3 leaseMs, $4 delivery ids, $5 LEASE_DOUBLINGS. Leased for leaseMs doubled for each earlier
// attempt (LEASE_DOUBLINGS at most) and counted as an attempt; each checked again as locked.
const LEASE =
  'UPDATE webhook_outbox o SET lease_owner = $1, lease_until = $2::bigint + $3::bigint * (1 << least(o.attempts, $5::int)), attempts = o.attempts + 1 ' +
  'FROM (SELECT id FROM webhook_outbox WHERE id = ANY($4::bigint[]) AND next_at <= $2::bigint AND (lease_until IS NULL OR lease_until <= $2::bigint) ORDER BY id FOR UPDATE SKIP LOCKED) p ' +
  'WHERE o.id = p.id RETURNING o.id, o.webhook_id, o.lease_until';

const LEASE_HOOKS =
  'UPDATE webhooks w SET lease_owner = $1, not_before = l.until, served_at = $2::bigint FROM unnest($3::bigint[], $4::bigint[]) AS l (id, until) WHERE w.id = l.id';
const LEASE_OPERATOR = 'UPDATE webhook_operator SET lease_owner = $1, not_before = $3::bigint, served_at = $2::bigint WHERE id = 1';

const CLAIMED =
  'SELECT o.id, o.webhook_id, w.url, w.secret, o.attempts, coalesce(w.timeouts, op.timeouts) AS timeouts, o.created_at, m.id AS mail_id, m.uuid, m.source, m.address, m.address_id, m.metadata, m.message_id, m.envelope, ' +
  `m.created_at AS mail_created_at, r.summary AS report_summary FROM ${OUTBOX} JOIN mails m ON m.id = o.mail_id LEFT JOIN report_summaries r ON r.mail_id = m.id WHERE o.id = ANY($1::bigint[])`;

/** The most a lease is doubled for the attempts a delivery had (64 times leaseMs), as on SQLite. */
const LEASE_DOUBLINGS = 6;

// One statement, so the attempt and the queue change commit together. The attempt is kept
// only while its address (and webhook) exist: a deletion during the attempt took its history.
const FINISH = (failed: boolean) =>
  'WITH done AS (' +
  (failed
    ? 'UPDATE webhook_outbox SET next_at = $12, lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2 RETURNING id'
    : 'DELETE FROM webhook_outbox WHERE id = $1 AND lease_owner = $2 RETURNING id') +
  '), released AS (' +
  '  UPDATE webhooks SET lease_owner = NULL, not_before = $14::bigint, timeouts = $15::int WHERE id = $3::bigint AND lease_owner = $2 RETURNING id' +
  '), released_operator AS (' +
  '  UPDATE webhook_operator SET lease_owner = NULL, not_before = $14::bigint, timeouts = $15::int WHERE id = 1 AND $3::bigint IS NULL AND lease_owner = $2 RETURNING id' +
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
        // A new webhook counts as served when it was set: it takes its turn after those served before.
        'INSERT INTO webhooks (address_id, url, secret, created_at, served_at) VALUES ($1, $2, $3, $4, $4) ' +
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
      // Nodes claiming at once read the same candidates and each skips what another locked:
      // a few times the limit are read, so that each still finds its share.
      const { rows: picked } = await pool.query<{ id: string; webhook_id: string | null }>(PICK, [c.now, c.operator, c.busyWebhooks, c.limit * 4]);
      if (picked.length === 0) return [];
      const rows = await inTransaction(pool, async (client) => {
        const hookIds = picked.filter((p) => p.webhook_id !== null).map((p) => p.webhook_id!);
        const free = new Set(hookIds.length ? (await client.query<{ id: string }>(LOCK_HOOKS, [hookIds, c.now])).rows.map((r) => r.id) : []);
        // After the webhooks' rows, as every claim locks them, so two claims never wait on each other.
        const operatorFree = picked.some((p) => p.webhook_id === null) && (await client.query(LOCK_OPERATOR, [c.now])).rows.length > 0;
        const ids = picked
          .filter((p) => (p.webhook_id === null ? operatorFree : free.has(p.webhook_id)))
          .slice(0, c.limit)
          .map((p) => p.id);
        if (ids.length === 0) return [];
        const { rows: leased } = await client.query<{ id: string; webhook_id: string | null; lease_until: string }>(LEASE, [c.owner, c.now, c.leaseMs, ids, LEASE_DOUBLINGS]);
        const hooks = leased.filter((l) => l.webhook_id !== null);
        if (hooks.length) await client.query(LEASE_HOOKS, [c.owner, c.now, hooks.map((l) => l.webhook_id), hooks.map((l) => l.lease_until)]);
        const op = leased.find((l) => l.webhook_id === null);
        if (op) await client.query(LEASE_OPERATOR, [c.owner, c.now, op.lease_until]);
        return leased.length ? (await client.query<ClaimedRow>(CLAIMED, [leased.map((l) => l.id)])).rows : [];
      });
      const byId = new Map(rows.map((r) => [r.id, r]));
      return picked.flatMap((p) => (byId.has(p.id) ? [toClaimed(byId.get(p.id)!)] : []));
    },
    async finishDelivery(owner, deliveryId, a, release: WebhookRelease) {
      const params = [deliveryId, owner, a.webhookId, a.addressId, a.mailUuid, a.url, a.attempt, a.at, a.outcome, a.status, a.durationMs, a.nextAt, a.error, release.notBefore, release.timeouts];
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
        'SELECT min(due) AS at FROM (SELECT greatest(o.next_at, coalesce(o.lease_until, 0), coalesce(w.not_before, op.not_before, 0)) AS due ' +
          `FROM ${OUTBOX} WHERE o.webhook_id IS NOT NULL OR $1::boolean) d WHERE due > $2`,
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
