-- Mails counted per hour, recipient domain and sender domain at delivery, for the admin's
-- per-domain figures (docs/operating.md "The operator's view"): they read these rows, a
-- few per domain and sending domain, never the mails. hour is the start of the UTC hour in
-- ms since the epoch (as smtp_refusals); domain is the pool domain a subdomain belongs to;
-- sender_domain is '' for the null sender. As mail_days, a count is spread over shards (a
-- delivery adds to the row of its first address's shard), so that deliveries on two nodes
-- do not wait for each other's row. Hours older than 32 days are pruned at delivery.
CREATE TABLE domain_mail_hours (
  hour BIGINT NOT NULL,
  domain TEXT NOT NULL,
  sender_domain TEXT NOT NULL,
  shard INTEGER NOT NULL,
  mails BIGINT NOT NULL,
  PRIMARY KEY (hour, domain, sender_domain, shard)
);
INSERT INTO domain_mail_hours (hour, domain, sender_domain, shard, mails)
  SELECT created_at / 3600000 * 3600000,
         lower(substr(address, strpos(address, '@') + 1)),
         CASE WHEN strpos(source, '@') > 0 THEN lower(substr(source, strpos(source, '@') + 1)) ELSE '' END,
         0,
         count(*)
  FROM mails GROUP BY 1, 2, 3;
