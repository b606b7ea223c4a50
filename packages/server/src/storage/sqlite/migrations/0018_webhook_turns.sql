-- Webhooks take turns and hold back (docs/decisions.md "Webhooks"): served_at, when
-- its latest attempt was claimed (the webhook served longest ago goes first);
-- lease_owner and not_before, the node whose attempt to it is in flight and the time
-- before which no other starts (that attempt's lease end, or the end of a hold after
-- attempts that timed out); timeouts, its attempts in a row that timed out.
ALTER TABLE webhooks ADD COLUMN served_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN lease_owner TEXT;
ALTER TABLE webhooks ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
UPDATE webhooks SET served_at = created_at;
