-- SMTP refusals counted per UTC hour, reason and recipient domain (docs/operating.md "Abuse
-- controls"): hour is the start of the hour in ms since the epoch; recipient_domain is ''
-- for a refusal before any recipient. Rows older than 31 days are pruned by the retention sweep.
CREATE TABLE smtp_refusals (
  hour INTEGER NOT NULL,
  reason TEXT NOT NULL,
  recipient_domain TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (hour, reason, recipient_domain)
);
