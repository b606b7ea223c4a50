-- The operators' admin: blocks refused at MAIL FROM with the
-- version every change moves, and mails counted per UTC day at delivery. Deliveries on several nodes commit at once, so the
-- count of a day is spread over 16 rows (shard = the delivery's first address id mod
-- 16): a delivery holds the lock of its row until it commits, and one row per day would
-- make every delivery wait for the one before it.
CREATE TABLE blocks (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('sender', 'domain', 'ip')),
  value TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  UNIQUE (kind, value)
);
CREATE TABLE blocks_version (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL);
INSERT INTO blocks_version (id, version) VALUES (1, 0);
CREATE FUNCTION bump_blocks_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE blocks_version SET version = version + 1;
  RETURN NULL;
END $$;
CREATE TRIGGER blocks_changed AFTER INSERT OR DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION bump_blocks_version();
CREATE TABLE mail_days (
  day INTEGER NOT NULL,
  shard INTEGER NOT NULL,
  mails BIGINT NOT NULL,
  PRIMARY KEY (day, shard)
);
INSERT INTO mail_days (day, shard, mails) SELECT (created_at / 86400000)::integer, 0, count(*) FROM mails GROUP BY 1;
