-- The domain pool (docs/operating.md "Domains and rotation"): the domains new addresses
-- are made at and mail is taken for, shared by every node. MAIL_DOMAINS fills it once
-- (seeded = 1 after), so that a domain the operators deleted does not come back at a
-- restart. Each change moves the version, which each node reads before it reloads the pool.
CREATE TABLE domain_pool (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  domain TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('active', 'disabled', 'retired')),
  subdomains INTEGER NOT NULL DEFAULT 0,
  added_at INTEGER NOT NULL,
  state_changed_at INTEGER NOT NULL,
  retired_until INTEGER
);
CREATE TABLE domain_pool_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, seeded INTEGER NOT NULL);
INSERT INTO domain_pool_version (id, version, seeded) VALUES (1, 0, 0);
CREATE TRIGGER domain_pool_added AFTER INSERT ON domain_pool BEGIN
  UPDATE domain_pool_version SET version = version + 1;
END;
CREATE TRIGGER domain_pool_changed AFTER UPDATE ON domain_pool BEGIN
  UPDATE domain_pool_version SET version = version + 1;
END;
CREATE TRIGGER domain_pool_removed AFTER DELETE ON domain_pool BEGIN
  UPDATE domain_pool_version SET version = version + 1;
END;
