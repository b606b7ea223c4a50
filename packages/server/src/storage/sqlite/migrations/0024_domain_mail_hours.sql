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
-- Addresses per domain, kept by triggers, so that the figures never count the addresses
-- themselves. stats_domain is the domain an address counts under, fixed when it is made
-- (a random subdomain's pool domain), so that its deletion takes back what its creation added
-- whatever the pool has become since; a domain's row goes when its last address does.
ALTER TABLE addresses ADD COLUMN stats_domain TEXT;
UPDATE addresses SET stats_domain = coalesce(
  (SELECT p.domain FROM domain_pool p WHERE substr(lower(substr(address, instr(address, '@') + 1)), -length(p.domain) - 1) = '.' || p.domain ORDER BY length(p.domain) DESC LIMIT 1),
  lower(substr(address, instr(address, '@') + 1)));
CREATE TABLE domain_addresses (
  domain TEXT PRIMARY KEY,
  addresses INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO domain_addresses (domain, addresses) SELECT stats_domain, count(*) FROM addresses GROUP BY stats_domain;
CREATE TRIGGER domain_addresses_added AFTER INSERT ON addresses BEGIN
  UPDATE addresses SET stats_domain = coalesce(
    (SELECT p.domain FROM domain_pool p WHERE substr(lower(substr(NEW.address, instr(NEW.address, '@') + 1)), -length(p.domain) - 1) = '.' || p.domain ORDER BY length(p.domain) DESC LIMIT 1),
    lower(substr(NEW.address, instr(NEW.address, '@') + 1)))
  WHERE id = NEW.id;
  INSERT INTO domain_addresses (domain, addresses) SELECT stats_domain, 1 FROM addresses WHERE id = NEW.id
    ON CONFLICT (domain) DO UPDATE SET addresses = addresses + 1;
END;
CREATE TRIGGER domain_addresses_removed AFTER DELETE ON addresses BEGIN
  UPDATE domain_addresses SET addresses = addresses - 1 WHERE domain = OLD.stats_domain;
  DELETE FROM domain_addresses WHERE domain = OLD.stats_domain AND addresses <= 0;
END;
