-- Issue 13 (run inspector): runs listed newest or oldest first, one page at a time, by a keyset
-- cursor on (created_at, id), optionally filtered by flow, status or both. One index per filter
-- shape, each ordered like the page, so a page is an index range scan of `limit` rows however
-- many runs there are. The (flow_id, created_at) index is replaced by one that ends with id.
CREATE INDEX IF NOT EXISTS runs_page ON runs (created_at, id);
CREATE INDEX IF NOT EXISTS runs_page_flow ON runs (flow_id, created_at, id);
CREATE INDEX IF NOT EXISTS runs_page_status ON runs (status, created_at, id);
CREATE INDEX IF NOT EXISTS runs_page_flow_status ON runs (flow_id, status, created_at, id);
DROP INDEX IF EXISTS runs_flow_id_created_at;
