-- A yanked piece version: flows whose published version pins it keep running it, but no new
-- flow version can pin it and "the latest" never resolves to it. Rows are never deleted, since
-- dispatch resolves a pinned version's archive from its row.
ALTER TABLE pieces ADD COLUMN yanked_at timestamptz;
