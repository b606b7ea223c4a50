// Webhooks in SQLite (store.ts WebhookStore; docs/decisions.md "Webhooks"): the address's
// webhook, the outbox of deliveries and the attempts. Deliveries are queued by
// sqlite-store.ts's insertMails through queueWebhooks, in the mail's own transaction.
// One process serves a database, but another may open the same file (a second start by
// mistake, a tool): a claim is one write transaction, so two claimers never share a
// delivery, nor a webhook while an attempt to it is in flight. The operator's deliveries
// (webhook_id NULL) are one webhook of their own, leased and held on webhook_operator's row.
import type Database from 'better-sqlite3';
import type { ClaimedDelivery, MailEnvelope, WebhookAttempt, WebhookOutcome, WebhookRecord, WebhookRelease, WebhookStore } from '../store.js';

interface WebhookRow {
  id: number;
  address_id: number;
  url: string;
  secret: string;
  created_at: number;
}

interface ClaimedRow {
  id: number;
  webhook_id: number | null;
  url: string | null;
  secret: string | null;
  attempts: number;
  timeouts: number | null;
  created_at: number;
  mail_id: number;
  uuid: string;
  source: string;
  address: string;
  address_id: number;
  metadata: string;
  message_id: string;
  envelope: string | null;
  mail_created_at: number;
  report_summary: string | null;
}

interface AttemptRow {
  webhook_id: number | null;
  address_id: number;
  mail_uuid: string;
  url: string;
  attempt: number;
  at: number;
  outcome: WebhookOutcome;
  status: number | null;
  duration_ms: number;
  error: string | null;
  next_at: number | null;
}

const toWebhook = (r: WebhookRow): WebhookRecord => ({ id: r.id, addressId: r.address_id, url: r.url, secret: r.secret, createdAt: r.created_at });

const toAttempt = (r: AttemptRow): WebhookAttempt => ({
  webhookId: r.webhook_id,
  addressId: r.address_id,
  mailUuid: r.mail_uuid,
  url: r.url,
  attempt: r.attempt,
  at: r.at,
  outcome: r.outcome,
  status: r.status,
  durationMs: r.duration_ms,
  error: r.error,
  nextAt: r.next_at,
});

const toClaimed = (r: ClaimedRow): ClaimedDelivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  url: r.url,
  secret: r.secret,
  // Counted when claimed: the attempts before this one.
  attempts: r.attempts - 1,
  timeouts: r.timeouts ?? 0,
  createdAt: r.created_at,
  addressId: r.address_id,
  mail: {
    id: r.mail_id,
    uuid: r.uuid,
    source: r.source,
    address: r.address,
    metadata: r.metadata,
    messageId: r.message_id,
    createdAt: r.mail_created_at,
    ...(r.envelope ? { envelope: JSON.parse(r.envelope) as MailEnvelope } : {}),
    ...(r.report_summary !== null ? { reportSummary: r.report_summary } : {}),
  },
});

/**
 * Queues a stored mail's deliveries: to its address's webhook, and to the operator's when
 * asked, first due at `dueAt`; answers how many. Runs inside insertMails' transaction.
 */
export type QueueWebhooks = (mailId: number, addressId: number, createdAt: number, operator: boolean, dueAt: number) => number;

export function sqliteWebhookQueue(db: Database.Database): QueueWebhooks {
  // The address's webhook is looked up first, and the delivery inserted only when there is
  // one: an INSERT … SELECT that inserts nothing still cost 55 µs a mail in the server (a
  // statement journal for it, in the middle of the mail's transaction), a plain SELECT 1 µs.
  const webhookOf = db.prepare('SELECT id FROM webhooks WHERE address_id = ?').pluck();
  const insert = db.prepare('INSERT INTO webhook_outbox (webhook_id, mail_id, created_at, next_at) VALUES (?, ?, ?, ?)');
  return (mailId, addressId, createdAt, operator, dueAt) => {
    const webhookId = webhookOf.get(addressId) as number | undefined;
    if (webhookId !== undefined) insert.run(webhookId, mailId, createdAt, dueAt);
    if (operator) insert.run(null, mailId, createdAt, dueAt);
    return (webhookId !== undefined ? 1 : 0) + (operator ? 1 : 0);
  };
}

/**
 * Due deliveries without a live lease whose webhook may start an attempt (none in flight
 * on any node, no hold running, not busy here), the operator's only on request and on
 * the same terms (its row, op, joined to its deliveries only).
 */
const DUE =
  'o.next_at <= @now AND (o.lease_until IS NULL OR o.lease_until <= @now) AND (CASE WHEN o.webhook_id IS NULL THEN @operator AND op.not_before <= @now ' +
  'ELSE w.not_before <= @now AND o.webhook_id NOT IN (SELECT value FROM json_each(@busy)) END)';
const DUE_FROM = 'webhook_outbox o LEFT JOIN webhooks w ON w.id = o.webhook_id LEFT JOIN webhook_operator op ON op.id = 1 AND o.webhook_id IS NULL';

/** The most a lease is doubled for the attempts a delivery had (64 times leaseMs). */
const LEASE_DOUBLINGS = 6;

/** `write` runs a write as the store's other writes run (retried while another connection holds the lock, resolved once durable). */
export function sqliteWebhookStore(db: Database.Database, write: <T>(run: () => T) => Promise<T>): WebhookStore {
  const q = {
    put: db.prepare(
      // A new webhook counts as served when it was set: it takes its turn after those served before.
      'INSERT INTO webhooks (address_id, url, secret, created_at, served_at) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (address_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, created_at = excluded.created_at RETURNING id, address_id, url, secret, created_at',
    ),
    get: db.prepare('SELECT id, address_id, url, secret, created_at FROM webhooks WHERE address_id = ?'),
    delete: db.prepare('DELETE FROM webhooks WHERE address_id = ?'),
    // Each webhook's earliest due delivery (the operator's, all in the one NULL partition,
    // as one webhook), in turns: the webhook served longest ago first.
    pick: db.prepare(
      'SELECT id, webhook_id, attempts FROM (' +
        `SELECT o.id, o.webhook_id, o.attempts, o.next_at, coalesce(w.served_at, op.served_at, o.next_at) AS turn, row_number() OVER (PARTITION BY o.webhook_id ORDER BY o.next_at, o.id) AS rn FROM ${DUE_FROM} WHERE ${DUE}` +
        ') WHERE rn = 1 ORDER BY turn, next_at, id LIMIT @limit',
    ),
    lease: db.prepare('UPDATE webhook_outbox SET lease_owner = @owner, lease_until = @until, attempts = attempts + 1 WHERE id = @id'),
    leaseHook: db.prepare('UPDATE webhooks SET lease_owner = @owner, not_before = @until, served_at = @now WHERE id = @id'),
    leaseOperator: db.prepare('UPDATE webhook_operator SET lease_owner = @owner, not_before = @until, served_at = @now WHERE id = 1'),
    anyDue: db.prepare(`SELECT 1 FROM ${DUE_FROM} WHERE ${DUE} LIMIT 1`).pluck(),
    claimed: db.prepare(
      'SELECT o.id, o.webhook_id, w.url, w.secret, o.attempts, coalesce(w.timeouts, op.timeouts) AS timeouts, o.created_at, m.id AS mail_id, m.uuid, m.source, m.address, m.address_id, m.metadata, m.message_id, m.envelope, ' +
        `m.created_at AS mail_created_at, r.summary AS report_summary FROM ${DUE_FROM} JOIN mails m ON m.id = o.mail_id LEFT JOIN report_summaries r ON r.mail_id = m.id ` +
        'WHERE o.id IN (SELECT value FROM json_each(?))',
    ),
    reschedule: db.prepare('UPDATE webhook_outbox SET next_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?'),
    release: db.prepare('UPDATE webhooks SET lease_owner = NULL, not_before = @notBefore, timeouts = @timeouts WHERE id = @id AND lease_owner = @owner'),
    releaseOperator: db.prepare('UPDATE webhook_operator SET lease_owner = NULL, not_before = @notBefore, timeouts = @timeouts WHERE id = 1 AND lease_owner = @owner'),
    remove: db.prepare('DELETE FROM webhook_outbox WHERE id = ? AND lease_owner = ?'),
    // Only while the address (and the webhook) it belongs to still exist: a deletion during the attempt took its history with it.
    record: db.prepare(
      'INSERT INTO webhook_attempts (webhook_id, address_id, mail_uuid, url, attempt, at, outcome, status, duration_ms, error, next_at) ' +
        'SELECT @webhookId, @addressId, @mailUuid, @url, @attempt, @at, @outcome, @status, @durationMs, @error, @nextAt ' +
        'WHERE EXISTS (SELECT 1 FROM addresses WHERE id = @addressId) AND (@webhookId IS NULL OR EXISTS (SELECT 1 FROM webhooks WHERE id = @webhookId))',
    ),
    nextDue: db.prepare(
      'SELECT min(due) FROM (SELECT max(o.next_at, coalesce(o.lease_until, 0), coalesce(w.not_before, op.not_before, 0)) AS due ' +
        `FROM ${DUE_FROM} WHERE o.webhook_id IS NOT NULL OR @operator) WHERE due > @after`,
    ).pluck(),
    attempts: db.prepare(
      'SELECT a.webhook_id, a.address_id, a.mail_uuid, a.url, a.attempt, a.at, a.outcome, a.status, a.duration_ms, a.error, a.next_at ' +
        'FROM webhook_attempts a WHERE a.webhook_id = (SELECT id FROM webhooks WHERE address_id = ?) ORDER BY a.id DESC LIMIT ?',
    ),
    pruneAttempts: db.prepare('DELETE FROM webhook_attempts WHERE at < ?'),
    pruneQueued: db.prepare('DELETE FROM webhook_outbox WHERE created_at < ? AND (lease_until IS NULL OR lease_until <= ?)'),
  };

  const claim = db.transaction((c: Parameters<WebhookStore['claimDeliveries']>[0]): ClaimedDelivery[] => {
    const picked = q.pick.all({ now: c.now, operator: c.operator ? 1 : 0, busy: JSON.stringify(c.busyWebhooks), limit: c.limit }) as { id: number; webhook_id: number | null; attempts: number }[];
    if (picked.length === 0) return [];
    for (const p of picked) {
      const until = c.now + c.leaseMs * 2 ** Math.min(p.attempts, LEASE_DOUBLINGS);
      q.lease.run({ owner: c.owner, until, id: p.id });
      if (p.webhook_id !== null) q.leaseHook.run({ owner: c.owner, until, now: c.now, id: p.webhook_id });
      else q.leaseOperator.run({ owner: c.owner, until, now: c.now });
    }
    const rows = new Map((q.claimed.all(JSON.stringify(picked.map((p) => p.id))) as ClaimedRow[]).map((r) => [r.id, r]));
    return picked.flatMap((p) => (rows.has(p.id) ? [toClaimed(rows.get(p.id)!)] : []));
  });

  const finish = db.transaction((owner: string, deliveryId: number, a: WebhookAttempt, release: WebhookRelease): boolean => {
    const held = (a.outcome === 'failed' ? q.reschedule.run(a.nextAt, deliveryId, owner) : q.remove.run(deliveryId, owner)).changes > 0;
    if (a.webhookId !== null) q.release.run({ id: a.webhookId, owner, notBefore: release.notBefore, timeouts: release.timeouts });
    else q.releaseOperator.run({ owner, notBefore: release.notBefore, timeouts: release.timeouts });
    q.record.run({
      webhookId: a.webhookId,
      addressId: a.addressId,
      mailUuid: a.mailUuid,
      url: a.url,
      attempt: a.attempt,
      at: a.at,
      outcome: a.outcome,
      status: a.status,
      durationMs: a.durationMs,
      error: a.error,
      nextAt: a.nextAt,
    });
    return held;
  });

  const prune = db.transaction((c: { attemptsBefore: number; queuedBefore: number; now: number }) => ({
    attempts: q.pruneAttempts.run(c.attemptsBefore).changes,
    deliveries: q.pruneQueued.run(c.queuedBefore, c.now).changes,
  }));

  return {
    async putWebhook(addressId, url, secret, createdAt) {
      return toWebhook(await write(() => q.put.get(addressId, url, secret, createdAt, createdAt) as WebhookRow));
    },
    async getWebhook(addressId) {
      const row = q.get.get(addressId) as WebhookRow | undefined;
      return row && toWebhook(row);
    },
    async deleteWebhook(addressId) {
      return write(() => q.delete.run(addressId).changes > 0);
    },
    async claimDeliveries(c) {
      if (c.limit <= 0) return [];
      // Most looks find nothing: a read answers them, with no write and no sync of the log.
      if (q.anyDue.get({ now: c.now, operator: c.operator ? 1 : 0, busy: JSON.stringify(c.busyWebhooks) }) === undefined) return [];
      return write(() => claim(c));
    },
    async finishDelivery(owner, deliveryId, attempt, release) {
      return write(() => finish(owner, deliveryId, attempt, release));
    },
    async nextDeliveryAt(operator, after) {
      const at = q.nextDue.get({ operator: operator ? 1 : 0, after }) as number | null;
      return at ?? undefined;
    },
    async listWebhookAttempts(addressId, limit) {
      return (q.attempts.all(addressId, limit) as AttemptRow[]).map(toAttempt);
    },
    async pruneWebhooks(cutoffs) {
      return write(() => prune(cutoffs));
    },
  };
}
