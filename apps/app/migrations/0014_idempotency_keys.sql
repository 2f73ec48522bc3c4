-- Webhook idempotency keys (`Idempotency-Key`): at most one run per flow and key while the key
-- lives (IDEMPOTENCY_TTL_HOURS). The key's row is written by the statement that creates its run,
-- so a key never names a run that does not exist, on any app, after any crash. An expired key is
-- taken over by the next request that sends it; retention deletes expired keys.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  flow_id text NOT NULL,
  key text NOT NULL,
  -- The sha256 of the first request's raw body; a repeat with another body is refused (422).
  body_sha256 text NOT NULL,
  sync boolean NOT NULL,
  run_id uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  -- A sync run's answer once its caller was given it (status, headers, body), for repeats.
  response jsonb,
  PRIMARY KEY (flow_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at ON idempotency_keys (expires_at);
