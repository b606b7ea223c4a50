-- Mails counted per hour, recipient domain and sender domain at delivery, for the admin's
-- per-domain figures (docs/operating.md "The operator's view"): they read these rows, a
-- few per domain and sending domain, never the mails. hour is the start of the UTC hour in
-- ms since the epoch (as smtp_refusals); domain is the pool domain a subdomain belongs to;
-- sender_domain is '' for the null sender. Hours older than 32 days are pruned at delivery.
CREATE TABLE domain_mail_hours (
  hour INTEGER NOT NULL,
  domain TEXT NOT NULL,
  sender_domain TEXT NOT NULL,
  mails INTEGER NOT NULL,
  PRIMARY KEY (hour, domain, sender_domain)
) WITHOUT ROWID;
INSERT INTO domain_mail_hours (hour, domain, sender_domain, mails)
  SELECT created_at / 3600000 * 3600000,
         lower(substr(address, instr(address, '@') + 1)),
         CASE WHEN instr(source, '@') > 0 THEN lower(substr(source, instr(source, '@') + 1)) ELSE '' END,
         count(*)
  FROM mails GROUP BY 1, 2, 3;
