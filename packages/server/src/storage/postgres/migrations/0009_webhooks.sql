-- Webhooks, their outbox (leased with FOR UPDATE SKIP LOCKED by
-- the node that sends a delivery) and the attempts (docs/decisions.md "Webhooks").
CREATE TABLE webhooks (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address_id BIGINT NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE webhook_outbox (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id BIGINT REFERENCES webhooks (id) ON DELETE CASCADE,
  mail_id BIGINT NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  next_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until BIGINT
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at);
CREATE INDEX webhook_outbox_mail ON webhook_outbox (mail_id);
CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);
CREATE TABLE webhook_attempts (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id BIGINT REFERENCES webhooks (id) ON DELETE CASCADE,
  address_id BIGINT NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
  mail_uuid TEXT NOT NULL,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at BIGINT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  status INTEGER,
  duration_ms INTEGER NOT NULL,
  error TEXT,
  next_at BIGINT
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
CREATE INDEX webhook_attempts_address ON webhook_attempts (address_id);
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
