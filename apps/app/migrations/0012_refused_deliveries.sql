-- Webhooks refused before any run existed (bad signature, body too large, queue full, flow
-- disabled or unpublished), kept per flow so their sender's mistakes can be seen: the last
-- REFUSED_DELIVERIES_PER_FLOW of each flow, deleted after RUN_RETENTION_DAYS like runs.
-- `suppressed` counts the refusals of the same flow folded into this row (over the per-second
-- cap): a flood is recorded as a few rows and a count.
CREATE TABLE refused_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  flow_id text NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
  received_at timestamptz NOT NULL,
  code text NOT NULL,
  message text NOT NULL,
  http_status integer NOT NULL,
  method text NOT NULL,
  sync boolean NOT NULL,
  source_address text NOT NULL,
  headers jsonb NOT NULL,
  suppressed integer NOT NULL DEFAULT 0
);
CREATE INDEX refused_deliveries_flow ON refused_deliveries (flow_id, received_at DESC, id DESC);
CREATE INDEX refused_deliveries_received_at ON refused_deliveries (received_at);
