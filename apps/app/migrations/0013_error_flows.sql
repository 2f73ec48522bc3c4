-- Error flows: a flow's `onFailure` flow runs once for each of its runs that ends FAILED, TIMEOUT or
-- INTERNAL_ERROR. Its run names the failed run in caused_by; the unique index makes that run one,
-- whichever app writes the final state. No foreign key: retention deletes runs oldest first.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS caused_by uuid;
CREATE UNIQUE INDEX IF NOT EXISTS runs_caused_by ON runs (caused_by) WHERE caused_by IS NOT NULL;
-- Why a failed run's error flow could not start (deleted, unpublished, disabled); null otherwise.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS error_flow_skipped text;
