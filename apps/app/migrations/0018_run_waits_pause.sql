-- A waiting point's pause: runs.resumes of the pause in force that waits at it, set by the pause,
-- cleared by the resume that takes it. An answered row with a pause is an answer no resume has
-- taken yet: the reconciler resumes its run should the resume be lost (an app that died between
-- the answer and its resume). The partial index holds only those rows, so the pass reads few.
ALTER TABLE run_waits ADD COLUMN pause integer;
CREATE INDEX run_waits_answered ON run_waits (answered_at) WHERE answered_at IS NOT NULL AND pause IS NOT NULL;
