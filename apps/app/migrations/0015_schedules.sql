-- What started a run: `webhook`, `schedule`, `manual`, `rerun` or `error_flow` (a failed run's
-- error flow).
ALTER TABLE runs ADD COLUMN source text NOT NULL DEFAULT 'webhook';
UPDATE runs SET source = 'rerun' WHERE rerun_of IS NOT NULL;
UPDATE runs SET source = 'error_flow' WHERE caused_by IS NOT NULL;

-- From when the published version's schedule counts ticks: set when another version is
-- published or the flow is enabled again, so ticks before it are neither fired nor caught up.
ALTER TABLE flows ADD COLUMN schedule_since timestamptz NOT NULL DEFAULT now();

-- One row per tick of a flow's schedule, written in the statement that creates its run: the
-- primary key is what makes a tick start one run whatever the number of apps firing it.
-- `outcome`: fired (run_id is its run), skipped (overlap, or the flow's queue was full: reason)
-- or missed (passed over after an outage, catchUp none). `missed`: ticks passed over before it.
CREATE TABLE schedule_ticks (
  flow_id text NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
  scheduled_at timestamptz NOT NULL,
  flow_version_id text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('fired', 'skipped', 'missed')),
  reason text,
  missed integer NOT NULL DEFAULT 0,
  run_id uuid,
  fired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (flow_id, scheduled_at)
);
