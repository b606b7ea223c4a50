-- The operator's WEBHOOK_URL leased, taking turns and held back as an address's webhook
-- is, through one row (locked at the claim as webhooks rows are).
CREATE TABLE webhook_operator (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  served_at BIGINT,
  lease_owner TEXT,
  not_before BIGINT NOT NULL DEFAULT 0,
  timeouts INTEGER NOT NULL DEFAULT 0
);
INSERT INTO webhook_operator (id) VALUES (1);
