-- The operators' admin (docs/decisions.md "Admin", "Blocks"). Blocks refused at
-- MAIL FROM (AUTOINCREMENT: an id never names another block later) with a version
-- every change moves, which each node reads before it reloads the list; and mails
-- counted per UTC day at delivery, so that the statistics outlive MAIL_TTL, started
-- from the mail stored now. shard is always 0 here (see postgres/migrations/0007_admin.sql).
CREATE TABLE blocks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('sender', 'domain', 'ip')),
  value TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (kind, value)
);
CREATE TABLE blocks_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
INSERT INTO blocks_version (id, version) VALUES (1, 0);
CREATE TRIGGER blocks_added AFTER INSERT ON blocks BEGIN
  UPDATE blocks_version SET version = version + 1;
END;
CREATE TRIGGER blocks_removed AFTER DELETE ON blocks BEGIN
  UPDATE blocks_version SET version = version + 1;
END;
CREATE TABLE mail_days (
  day INTEGER NOT NULL,
  shard INTEGER NOT NULL,
  mails INTEGER NOT NULL,
  PRIMARY KEY (day, shard)
) WITHOUT ROWID;
INSERT INTO mail_days (day, shard, mails) SELECT created_at / 86400000, 0, count(*) FROM mails GROUP BY created_at / 86400000;
