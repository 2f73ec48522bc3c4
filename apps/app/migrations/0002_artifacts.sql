-- Issue 3: published flow versions carry a bundle in S3; pieces are published as archives; runs
-- keep what the worker's cache and engine did.
ALTER TABLE flow_versions
  ADD COLUMN number integer,
  ADD COLUMN bundle_key text,
  ADD COLUMN bundle_sha256 text,
  ADD COLUMN bundle_size integer,
  ADD COLUMN bundle_pieces jsonb,
  ADD COLUMN published_at timestamptz;

UPDATE flow_versions v SET number = sub.n
FROM (SELECT id, row_number() OVER (PARTITION BY flow_id ORDER BY created_at, id) AS n FROM flow_versions) sub
WHERE v.id = sub.id;

ALTER TABLE flow_versions ALTER COLUMN number SET NOT NULL;
CREATE UNIQUE INDEX flow_versions_flow_id_number ON flow_versions (flow_id, number);

CREATE TABLE pieces (
  name text NOT NULL,
  version text NOT NULL,
  archive_key text NOT NULL,
  sha256 text NOT NULL,
  size_bytes integer NOT NULL,
  manifest jsonb NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, version)
);

ALTER TABLE runs ADD COLUMN provisioning jsonb;
