-- Webhooks take turns (served_at), one attempt in flight per
-- webhook across nodes (lease_owner, not_before, locked at the claim) and a hold after
-- attempts that timed out (not_before, timeouts).
ALTER TABLE webhooks ADD COLUMN served_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN lease_owner TEXT;
ALTER TABLE webhooks ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
UPDATE webhooks SET served_at = created_at;
