-- Flows, their immutable versions, and runs with their timeline.
CREATE TABLE flows (
  id text PRIMARY KEY,
  name text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  published_version_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE flow_versions (
  id text PRIMARY KEY,
  flow_id text NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX flow_versions_flow_id ON flow_versions (flow_id);

ALTER TABLE flows
  ADD CONSTRAINT flows_published_version_fk FOREIGN KEY (published_version_id) REFERENCES flow_versions (id);

CREATE TABLE runs (
  id uuid PRIMARY KEY,
  flow_id text NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
  flow_version_id text NOT NULL REFERENCES flow_versions (id),
  status text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR')),
  sync boolean NOT NULL,
  steps jsonb NOT NULL DEFAULT '[]'::jsonb,
  error jsonb,
  log_key text,
  log_error jsonb,
  timings jsonb,
  worker_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);

CREATE INDEX runs_flow_id_created_at ON runs (flow_id, created_at DESC);
CREATE INDEX runs_unfinished ON runs (status) WHERE status IN ('QUEUED', 'RUNNING');
