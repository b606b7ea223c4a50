-- Addresses a catch-all domain created on first mail, whose token nobody has taken yet.
ALTER TABLE addresses ADD COLUMN unclaimed BOOLEAN NOT NULL DEFAULT false;
