import type { EngineJob } from '@flowbox/protocol';
import type { FlowExecution, FlowExecutor } from '../../src/flows/flow-executor.ts';

/**
 * An execution and the log upload that follows it, as the app ends up recording them: the
 * outcome's `logKey` null and `logError` set when the upload failed, `logPersistMs` measured.
 */
export async function executeThenPersist(executor: FlowExecutor, job: EngineJob): Promise<FlowExecution> {
  const { persistLog, ...execution } = await executor.execute(job);
  if (persistLog === undefined) return execution;
  const report = await persistLog();
  const outcome = { ...execution.outcome };
  if (report.logError !== undefined) {
    outcome.logKey = null;
    outcome.logError = report.logError;
  }
  const ended: FlowExecution = {
    outcome,
    timings: { ...execution.timings, logPersistMs: report.logPersistMs },
  };
  if (execution.spans !== undefined) ended.spans = [...execution.spans, ...(report.spans ?? [])];
  return ended;
}

/** The executor with each execution's log upload awaited (executeThenPersist). */
export function persistingExecutor(executor: FlowExecutor): FlowExecutor {
  return { ...executor, execute: (job) => executeThenPersist(executor, job) };
}
