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
-- Addresses per domain, kept by triggers, so that the figures never count the addresses
-- themselves. stats_domain is the domain an address counts under, fixed when it is made
-- (a random subdomain's pool domain), so that its deletion takes back what its creation added
-- whatever the pool has become since. Spread over 16 shards by the address's id, so that
-- addresses made on two nodes at once do not wait for one row's lock.
CREATE FUNCTION stats_domain_of(address TEXT) RETURNS TEXT LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT p.domain FROM domain_pool p WHERE right(lower(split_part(address, '@', 2)), length(p.domain) + 1) = '.' || p.domain ORDER BY length(p.domain) DESC LIMIT 1),
    lower(split_part(address, '@', 2)))
$$;
ALTER TABLE addresses ADD COLUMN stats_domain TEXT;
UPDATE addresses SET stats_domain = stats_domain_of(address);
CREATE TABLE domain_addresses (
  domain TEXT NOT NULL,
  shard INTEGER NOT NULL,
  addresses BIGINT NOT NULL,
  PRIMARY KEY (domain, shard)
);
INSERT INTO domain_addresses (domain, shard, addresses) SELECT stats_domain, 0, count(*) FROM addresses GROUP BY stats_domain;
CREATE FUNCTION set_stats_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.stats_domain := stats_domain_of(NEW.address);
  RETURN NEW;
END $$;
-- Set before the row is written; counted after, so that an insert skipped by ON CONFLICT counts nothing.
CREATE TRIGGER addresses_stats_domain BEFORE INSERT ON addresses FOR EACH ROW EXECUTE FUNCTION set_stats_domain();
CREATE FUNCTION count_domain_address() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO domain_addresses (domain, shard, addresses) VALUES (NEW.stats_domain, NEW.id % 16, 1)
      ON CONFLICT (domain, shard) DO UPDATE SET addresses = domain_addresses.addresses + 1;
  ELSE
    UPDATE domain_addresses SET addresses = addresses - 1 WHERE domain = OLD.stats_domain AND shard = OLD.id % 16;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER addresses_counted AFTER INSERT OR DELETE ON addresses FOR EACH ROW EXECUTE FUNCTION count_domain_address();
