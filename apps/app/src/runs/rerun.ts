import { randomUUID } from 'node:crypto';
import { FlowboxError, type RunJobData, serializeError } from '@flowbox/protocol';
import type { RunLifecycle } from './run-lifecycle.ts';
import type { RerunVersion } from './run-reruns.ts';
import type { RunsRepository } from './runs-repository.ts';

/** The queue as a re-run uses it (RunQueue). */
export interface RerunQueue {
  add(data: RunJobData, rank?: number): Promise<void>;
}

/**
 * Starts a new run of `runId`'s flow with its kept trigger request, async (nobody holds a
 * connection for it), linked by `rerunOf`. By default the same version, not the flow's published
 * one: a re-run repeats what ran; a fix outside the version (a connection, a downstream service)
 * is what it picks up. With `latest`, the flow's published version: a fix in the flow itself.
 * Returns the new run's id and version.
 */
export async function startRerun(
  deps: { runs: RunsRepository; lifecycle: RunLifecycle; queue: RerunQueue },
  runId: string,
  version: RerunVersion = 'run',
): Promise<{ runId: string; flowVersionId: string }> {
  const source = await deps.runs.rerunSource(runId, version);
  switch (source.kind) {
    case 'missing':
      throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
    case 'removed':
      throw new FlowboxError('RUN_TRIGGER_GONE', `run ${runId} and its request were deleted by retention`);
    case 'no-trigger':
      throw new FlowboxError('RUN_TRIGGER_GONE', `run ${runId} was accepted before requests were kept`);
    case 'no-published-version':
      throw new FlowboxError('FLOW_NOT_FOUND', `flow ${source.flowId} was deleted: it has no latest version`);
  }
  const id = randomUUID();
  const accepted = await deps.lifecycle.accept({
    id,
    flowId: source.flowId,
    flowVersionId: source.flowVersionId,
    sync: false,
    trigger: source.trigger,
    syncInstanceId: null,
    rerunOf: source.id,
  });
  if (accepted === null) {
    throw new FlowboxError(
      'FLOW_QUEUE_FULL',
      `flow ${source.flowId} has as many runs waiting as it may; no run was created, try again shortly`,
    );
  }
  const job: RunJobData = {
    version: 1,
    type: 'run-flow',
    runId: id,
    flowId: source.flowId,
    flowVersionId: source.flowVersionId,
    trigger: source.trigger,
    syncInstanceId: null,
    acceptedAt: Date.now(),
  };
  try {
    await deps.queue.add(job, accepted.rank);
  } catch (error) {
    // As a webhook's: the accepted run ends readable, saying why it never ran.
    await deps.lifecycle.failUnqueued({ id, flowId: source.flowId }, serializeError(error));
    throw error;
  }
  return { runId: id, flowVersionId: source.flowVersionId };
}
