-- What the schedule and poll tickers reload. Every change of a flow's published version, of
-- `enabled` or of `deleted_at` takes the next number of the one-row counter and stamps it on the
-- flow (`trigger_seq`), in the transaction that makes the change. The counter's row lock is held
-- until that transaction ends, so the numbers commit in order: a ticker that has read every flow
-- up to number N has missed none below it, and each pass asks only for `trigger_seq > N`
-- (one index scan, empty between changes) instead of reading every published flow.
CREATE TABLE trigger_change_seq (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  seq bigint NOT NULL
);
INSERT INTO trigger_change_seq (seq) VALUES (0);

ALTER TABLE flows ADD COLUMN trigger_seq bigint NOT NULL DEFAULT 0;
CREATE INDEX flows_trigger_seq ON flows (trigger_seq);

-- A trigger rather than a line in each statement: no path that changes what ticks can forget it.
CREATE FUNCTION flows_trigger_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.published_version_id IS DISTINCT FROM OLD.published_version_id
     OR NEW.enabled IS DISTINCT FROM OLD.enabled
     OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at THEN
    UPDATE trigger_change_seq SET seq = seq + 1 RETURNING seq INTO NEW.trigger_seq;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER flows_trigger_seq BEFORE UPDATE ON flows
  FOR EACH ROW EXECUTE FUNCTION flows_trigger_seq();
