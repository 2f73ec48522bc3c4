-- Issue 25 item 1: connections, secrets the app keeps encrypted (AES-256-GCM) and lends to runs.
-- key_id names the key that sealed the row (a short hash of it), so CONNECTIONS_KEY can be
-- rotated with CONNECTIONS_KEY_PREVIOUS opening the older rows until they are sealed again.
CREATE TABLE connections (
  name text PRIMARY KEY,
  ciphertext bytea NOT NULL,
  iv bytea NOT NULL,
  auth_tag bytea NOT NULL,
  key_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The connections a version references, recorded at publish: dispatch resolves these and no
-- other, and deleting a connection a published version names is refused (409).
ALTER TABLE flow_versions ADD COLUMN connections text[] NOT NULL DEFAULT '{}';
