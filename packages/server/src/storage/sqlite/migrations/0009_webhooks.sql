-- Webhooks (docs/decisions.md "Webhooks"): one per address; the outbox of deliveries,
-- queued in the mail's own transaction (webhook_id NULL: the operator's WEBHOOK_URL) and
-- leased by the node that sends them; the attempts GET /api/webhook/deliveries lists.
-- Deliveries go with their mail or webhook, attempts with their webhook or address.
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  address_id INTEGER NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE webhook_outbox (
  id INTEGER PRIMARY KEY,
  webhook_id INTEGER REFERENCES webhooks (id) ON DELETE CASCADE,
  mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  next_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until INTEGER
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at);
CREATE INDEX webhook_outbox_mail ON webhook_outbox (mail_id);
CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);
CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY,
  webhook_id INTEGER REFERENCES webhooks (id) ON DELETE CASCADE,
  address_id INTEGER NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
  mail_uuid TEXT NOT NULL,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  status INTEGER,
  duration_ms INTEGER NOT NULL,
  error TEXT,
  next_at INTEGER
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
CREATE INDEX webhook_attempts_address ON webhook_attempts (address_id);
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
