-- Issue 30: Redis is the transport, not the truth. A run's row holds everything enqueueing it
-- again needs (its flow version and attempts were here already): the trigger request, the app
-- instance holding a sync caller, and the trace it joins. The webhook's one INSERT writes them,
-- so the reconciler can put back a job that Redis lost. Runs from before this have no trigger.
ALTER TABLE runs ADD COLUMN trigger jsonb;
ALTER TABLE runs ADD COLUMN sync_instance_id text;
ALTER TABLE runs ADD COLUMN traceparent text;
-- The reconciler looks for RUNNING runs by their start (QUEUED ones by runs_page_status).
CREATE INDEX IF NOT EXISTS runs_running_started ON runs (started_at) WHERE status = 'RUNNING';
-- Work one app at a time does (the reconciler's passes), by a lease with an expiry: it holds
-- behind PgBouncer in transaction mode and on PGlite alike (db/lease.ts).
CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
