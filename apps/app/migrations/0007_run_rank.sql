-- A run's place in its flow's queue when it was accepted: one more than the highest rank among
-- the flow's runs still waiting, 1 when none waits. Its job's BullMQ priority, so jobs leave the
-- queue round-robin over flows, and in order within one flow.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rank integer NOT NULL DEFAULT 1;
-- The highest rank among a flow's waiting runs, read at every accept: one index entry, not a scan
-- of the flow's backlog.
CREATE INDEX IF NOT EXISTS runs_queued_rank ON runs (flow_id, rank DESC) WHERE status = 'QUEUED';
