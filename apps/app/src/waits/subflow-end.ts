import type { ChildEnd } from '../runs/run-lifecycle.ts';
import type { RunResumer } from '../runs/run-resumer.ts';
import type { SubflowsRepository } from './subflows-repository.ts';

/**
 * A sub-flow's run ended: its end (`{ runId, status, response?, error? }`, what the parent's
 * `flow` step reads) answers the parent's waiting point, once, and a paused parent resumes. A
 * parent that did not wait (or timed out) has no unanswered row: nothing happens.
 */
export async function subflowEnded(
  deps: { subflows: SubflowsRepository; resumer: Pick<RunResumer, 'resume'> },
  end: ChildEnd,
): Promise<void> {
  const { parentRunId: _parent, ...value } = end;
  const parent = await deps.subflows.answerParent(end.runId, value);
  if (parent !== null) await deps.resumer.resume(parent, { cause: 'child' });
}
