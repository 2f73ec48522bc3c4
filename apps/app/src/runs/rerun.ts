import { randomUUID } from 'node:crypto';
import { FlowboxError, parseMessage, type RunJobData, RunLogSchema, serializeError } from '@flowbox/protocol';
import { checkpointKey } from '../queue/durable-dispatch.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { rerunCheckpoint } from './rerun-checkpoint.ts';
import type { RunLifecycle } from './run-lifecycle.ts';
import type { RerunVersion } from './run-reruns.ts';
import type { RunsRepository } from './runs-repository.ts';

/** The queue as a re-run uses it (RunQueue). */
export interface RerunQueue {
  add(data: RunJobData, rank?: number): Promise<void>;
}

/** Where a re-run starts: the flow's first step, or (`failed`) the step the run failed at. */
export type RerunFrom = 'start' | 'failed';

/**
 * Starts a new run of `runId`'s flow with its kept trigger request, async (nobody holds a
 * connection for it), linked by `rerunOf`. By default the same version, not the flow's published
 * one: a re-run repeats what ran; a fix outside the version (a connection, a downstream service)
 * is what it picks up. With `latest`, the flow's published version: a fix in the flow itself.
 * From `failed`: the steps that succeeded are replayed from the run's log, not run again
 * (rerun-checkpoint.ts); on the run's own version only, whose step paths the log names.
 * Returns the new run's id and version.
 */
export async function startRerun(
  deps: {
    runs: RunsRepository;
    lifecycle: RunLifecycle;
    queue: RerunQueue;
    storage: Pick<ObjectStorage, 'getText' | 'put'>;
  },
  runId: string,
  version: RerunVersion = 'run',
  from: RerunFrom = 'start',
): Promise<{ runId: string; flowVersionId: string; replayed?: number }> {
  if (from === 'failed' && version === 'latest') {
    throw new FlowboxError(
      'INVALID_REQUEST',
      'from: "failed" re-runs the run\'s own version (its steps are replayed by path); it cannot be combined with version: "latest"',
    );
  }
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
  const replay = from === 'failed' ? await writeReplay(deps, runId, id, source.flowVersionId) : undefined;
  const accepted = await deps.lifecycle.accept({
    id,
    flowId: source.flowId,
    flowVersionId: source.flowVersionId,
    sync: false,
    trigger: source.trigger,
    syncInstanceId: null,
    rerunOf: source.id,
    checkpointKey: replay?.key,
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
  // Its first job resumes from the checkpoint (the run is created as its own first resume).
  if (replay !== undefined) job.resume = 1;
  try {
    await deps.queue.add(job, accepted.rank);
  } catch (error) {
    // As a webhook's: the accepted run ends readable, saying why it never ran.
    await deps.lifecycle.failUnqueued({ id, flowId: source.flowId }, serializeError(error));
    throw error;
  }
  return {
    runId: id,
    flowVersionId: source.flowVersionId,
    ...(replay === undefined ? {} : { replayed: replay.replayed }),
  };
}

/**
 * The checkpoint of a failed run's succeeded steps, from its log, written where the new run's
 * resume reads it. RERUN_NOT_POSSIBLE when the run did not fail or its log is not there.
 */
async function writeReplay(
  deps: { runs: RunsRepository; storage: Pick<ObjectStorage, 'getText' | 'put'> },
  runId: string,
  newRunId: string,
  flowVersionId: string,
): Promise<{ key: string; replayed: number }> {
  const run = await deps.runs.get(runId);
  if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
  if (run.status !== 'FAILED' && run.status !== 'TIMEOUT') {
    throw new FlowboxError(
      'RERUN_NOT_POSSIBLE',
      `run ${runId} is ${run.status}: only a FAILED or TIMEOUT run re-runs from its failed step`,
    );
  }
  if (run.logKey === null) {
    throw new FlowboxError(
      'RERUN_NOT_POSSIBLE',
      `run ${runId} has no run log to replay its steps from; re-run it from the start`,
    );
  }
  let text: string;
  try {
    text = await deps.storage.getText(run.logKey);
  } catch (error) {
    throw new FlowboxError(
      'RERUN_NOT_POSSIBLE',
      `run ${runId}'s log could not be read (${error instanceof Error ? error.message : String(error)}); re-run it from the start`,
    );
  }
  const log = parseMessage(RunLogSchema, JSON.parse(text));
  if (!log.ok) {
    throw new FlowboxError('RERUN_NOT_POSSIBLE', `run ${runId}'s log is not a run log: ${log.error}`);
  }
  const { checkpoint, replayed } = rerunCheckpoint(log.value, { runId: newRunId, flowVersionId });
  // Where its pause of the first attempt would write: retention deletes it with the run.
  const key = checkpointKey(newRunId, 0);
  await deps.storage.put(key, Buffer.from(JSON.stringify(checkpoint)), 'application/json');
  return { key, replayed };
}
