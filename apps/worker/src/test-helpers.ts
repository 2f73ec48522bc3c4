import { makeEngineJob } from '@flowbox/engine/testing';
import { createLogger, type Logger } from '@flowbox/node-kit';
import type { DispatchedJob, FlowDefinition, RunLimits } from '@flowbox/protocol';

/** Test-only helpers for the worker's tests. */
export function silentLogger(): Logger {
  return createLogger({ name: 'worker-test', level: 'silent' });
}

export function makeDispatchedJob(
  app: { url: string; logUploadUrl(key: string): string },
  runId: string,
  overrides: { flow?: FlowDefinition; limits?: Partial<RunLimits> } = {},
): DispatchedJob {
  const base = makeEngineJob(app.url, app.logUploadUrl(`runs/${runId}.json`), { runId });
  return {
    jobId: `job-${runId}`,
    runId,
    flowId: base.flowId,
    flowVersionId: base.flowVersionId,
    flow: overrides.flow ?? base.flow,
    trigger: base.trigger,
    engineToken: base.engineToken,
    logUpload: { ...base.logUpload, key: `runs/${runId}.json` },
    limits: { ...base.limits, ...overrides.limits },
    acceptedAt: Date.now(),
  };
}

/** True while a process with this pid exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
