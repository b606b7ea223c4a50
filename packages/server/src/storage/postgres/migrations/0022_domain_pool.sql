-- The domain pool (docs/operating.md "Domains and rotation"): the domains new addresses
-- are made at and mail is taken for, shared by every node. MAIL_DOMAINS fills it once
-- (seeded after), so that a domain the operators deleted does not come back at a
-- restart. Each change moves the version, which each node reads before it reloads the pool.
CREATE TABLE domain_pool (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('active', 'disabled', 'retired')),
  subdomains BOOLEAN NOT NULL DEFAULT false,
  added_at BIGINT NOT NULL,
  state_changed_at BIGINT NOT NULL,
  retired_until BIGINT
);
CREATE TABLE domain_pool_version (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL, seeded BOOLEAN NOT NULL);
INSERT INTO domain_pool_version (id, version, seeded) VALUES (1, 0, false);
CREATE FUNCTION bump_domain_pool_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE domain_pool_version SET version = version + 1;
  RETURN NULL;
END $$;
CREATE TRIGGER domain_pool_changed AFTER INSERT OR UPDATE OR DELETE ON domain_pool FOR EACH ROW EXECUTE FUNCTION bump_domain_pool_version();
