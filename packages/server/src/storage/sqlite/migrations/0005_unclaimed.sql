-- Addresses a catch-all domain created on first mail, whose token nobody has taken yet.
ALTER TABLE addresses ADD COLUMN unclaimed INTEGER NOT NULL DEFAULT 0;
