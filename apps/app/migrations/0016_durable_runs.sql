-- Durable runs: a run that waits (a delay, a request, a child run, a retry's backoff) is PAUSED
-- with no worker held; `resumes` counts its resumes (the resume job's id is
-- `resume:<run id>:<resumes>`), `checkpoint_key` names the checkpoint the next resume replays.
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN
  ('QUEUED', 'RUNNING', 'PAUSED', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR'));
ALTER TABLE runs ADD COLUMN resumes integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN checkpoint_key text;
-- Null unless PAUSED.
ALTER TABLE runs ADD COLUMN paused_at timestamptz;
-- A sub-flow's parent run and the parent's `flow` step path; depth 0 for a top-level run.
ALTER TABLE runs ADD COLUMN parent_run_id uuid;
ALTER TABLE runs ADD COLUMN parent_path text;
ALTER TABLE runs ADD COLUMN depth integer NOT NULL DEFAULT 0;
-- At most one child per parent run and step path: asking again names the same child.
CREATE UNIQUE INDEX runs_parent_step ON runs (parent_run_id, parent_path) WHERE parent_run_id IS NOT NULL;

-- One row per waiting point of a paused run, by step path. A pause upserts its rows (times and
-- child), never `value`/`answered_at`: a request or a child's end may arrive before the pause and
-- is kept. `answered_at` is set once (a second answer finds it set: 409).
CREATE TABLE run_waits (
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  path text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('delay', 'request', 'approval', 'flow', 'retry')),
  -- delay, retry: when to resume.
  resume_at timestamptz,
  -- request, approval, flow: past it the step fails WAIT_TIMEOUT.
  timeout_at timestamptz,
  child_run_id uuid,
  -- What arrived: a request, a child's end.
  value jsonb,
  answered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, path)
);
-- The reconciler's due timers (lost from Redis): one indexed range read per pass.
CREATE INDEX run_waits_due ON run_waits ((COALESCE(resume_at, timeout_at))) WHERE answered_at IS NULL;
