-- Issue 6: a run whose engine crashed or whose worker was lost is retried, up to RUN_MAX_ATTEMPTS
-- times; each start counts.
ALTER TABLE runs ADD COLUMN attempts integer NOT NULL DEFAULT 0;
