-- Issue 24: the piece registry. What publishing learnt by loading a piece's module: the Node
-- built-ins it imports (a piece with any cannot run in a V8 isolate, issue 29) and its actions
-- with their input schemas as JSON Schema. NULL for rows published before this migration: the
-- next publish of the same content (the built-ins at every start) fills them in.
ALTER TABLE pieces
  ADD COLUMN node_builtins text[],
  ADD COLUMN actions jsonb;
