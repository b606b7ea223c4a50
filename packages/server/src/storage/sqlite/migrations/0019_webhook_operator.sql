-- The operator's WEBHOOK_URL takes its turn and is held back as an address's webhook
-- is (docs/security.md "Webhooks"): one row with 0018's served_at, lease_owner, not_before
-- and timeouts, for all the operator's deliveries (webhook_outbox.webhook_id NULL). Never
-- served (served_at NULL), its turn is its earliest due delivery's due time.
CREATE TABLE webhook_operator (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  served_at INTEGER,
  lease_owner TEXT,
  not_before INTEGER NOT NULL DEFAULT 0,
  timeouts INTEGER NOT NULL DEFAULT 0
);
INSERT INTO webhook_operator (id) VALUES (1);
