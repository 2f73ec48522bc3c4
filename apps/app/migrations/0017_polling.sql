-- Polling triggers. One row per polled flow version: the trigger's state after the last poll
-- whose items were recorded, the latest tick taken (by any app: the update that takes it is the
-- once-per-tick decision), the poll in flight (its lease), and what the inspector shows.
-- `baseline_at` is null until the first poll has recorded what the source held.
CREATE TABLE trigger_polls (
  flow_version_id text PRIMARY KEY REFERENCES flow_versions (id) ON DELETE CASCADE,
  flow_id text NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
  state jsonb,
  baseline_at timestamptz,
  last_tick timestamptz NOT NULL,
  lease_id uuid,
  leased_until timestamptz,
  polls bigint NOT NULL DEFAULT 0,
  items_found bigint NOT NULL DEFAULT 0,
  -- Failed polls in a row (0 after a poll that succeeded); the last failure stays for the inspector.
  failures integer NOT NULL DEFAULT 0,
  last_error jsonb,
  last_error_at timestamptz,
  last_polled_at timestamptz
);

CREATE INDEX trigger_polls_flow_id ON trigger_polls (flow_id);

-- Every item key a flow version's polls have recorded, written in the transaction that creates
-- the item's run: the primary key is what makes an item start one run, however many polls see
-- it. `run_id` is null for the items the first poll found (the baseline).
CREATE TABLE poll_items (
  flow_version_id text NOT NULL REFERENCES flow_versions (id) ON DELETE CASCADE,
  key text NOT NULL,
  run_id uuid,
  found_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (flow_version_id, key)
);

-- A run a polled item started has `runs.source = 'poll'`, its item as the trigger's body.
