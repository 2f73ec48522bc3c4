-- Issue 25 item 4: re-runs, deleting a flow, run retention.
-- A re-run's run names the run it repeats. No foreign key: retention deletes runs oldest first,
-- and a re-run keeps saying what it repeated after that run is gone.
ALTER TABLE runs ADD COLUMN rerun_of uuid;
CREATE INDEX IF NOT EXISTS runs_rerun_of ON runs (rerun_of) WHERE rerun_of IS NOT NULL;
-- A deleted flow is kept as a row (soft delete): its versions and runs reference it, and its
-- runs stay readable until retention takes them. Its id stays taken.
ALTER TABLE flows ADD COLUMN deleted_at timestamptz;
-- Retention reads the oldest runs first by runs_page (created_at, id), from 0004.
-- What retention deleted, so a re-run of a deleted run answers 410 (gone) rather than 404. Kept
-- as long again as the runs were, then pruned by the same sweeper.
CREATE TABLE run_tombstones (
  id uuid PRIMARY KEY,
  removed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_tombstones_removed_at ON run_tombstones (removed_at);
