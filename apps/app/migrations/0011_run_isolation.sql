-- How the worker kept a run apart from others (`isolate`, `process` or `shared`), from its
-- result; null for a run no worker reported.
ALTER TABLE runs ADD COLUMN isolation text;
