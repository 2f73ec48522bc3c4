import { randomUUID } from 'node:crypto';
import {
  FlowboxError,
  type RunJobData,
  type SubflowStart,
  serializeError,
  type TriggerPayload,
} from '@flowbox/protocol';
import type { FlowsRepository } from '../flows/flows-repository.ts';
import type { RerunQueue } from '../runs/rerun.ts';
import type { RunLifecycle } from '../runs/run-lifecycle.ts';
import type { SubflowsRepository } from './subflows-repository.ts';

export interface SubflowStartDeps {
  subflows: SubflowsRepository;
  flows: Pick<FlowsRepository, 'findPublished'>;
  lifecycle: Pick<RunLifecycle, 'accept' | 'failUnqueued'>;
  queue: RerunQueue;
  /** SUBFLOW_MAX_DEPTH: a run this many sub-flows deep starts none. */
  maxDepth: number;
}

/**
 * A `flow` step's child run (the engine's `subflow-start`): at most one per parent run and step
 * path, so an engine that asks again (a resumed or retried attempt) is named the same child. The
 * child runs the flow's published version, async, its trigger a POST of the step's input. A
 * waiting step's `run_waits` row is written before the child exists, so its end always finds it.
 */
export async function startSubflow(
  deps: SubflowStartDeps,
  parentRunId: string,
  report: SubflowStart,
): Promise<string> {
  const existing = await deps.subflows.childAt(parentRunId, report.path);
  if (existing !== null) {
    if (report.wait) await deps.subflows.awaitChild(parentRunId, report.path, existing);
    return existing;
  }
  const depth = await deps.subflows.depthOf(parentRunId);
  if (depth === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${parentRunId} not found`);
  if (depth + 1 > deps.maxDepth) {
    throw new FlowboxError(
      'SUBFLOW_TOO_DEEP',
      `run ${parentRunId} is ${depth} sub-flows deep: its step ${report.path} may not start flow ${report.flowId} (SUBFLOW_MAX_DEPTH is ${deps.maxDepth})`,
    );
  }
  const flow = await deps.flows.findPublished(report.flowId);
  if (flow === null || !flow.enabled) {
    throw new FlowboxError(
      'FLOW_NOT_FOUND',
      `flow ${report.flowId} does not exist, is not published or is disabled`,
    );
  }
  const id = randomUUID();
  if (report.wait) await deps.subflows.awaitChild(parentRunId, report.path, id);
  const rawBody = JSON.stringify(report.input);
  const trigger: TriggerPayload = {
    method: 'POST',
    headers: {},
    query: {},
    body: report.input,
    rawBody,
    rawBodyEncoding: 'utf8',
  };
  let accepted: { rank: number } | null;
  try {
    accepted = await deps.lifecycle.accept({
      id,
      flowId: flow.flowId,
      flowVersionId: flow.flowVersionId,
      sync: false,
      trigger,
      syncInstanceId: null,
      source: 'subflow',
      parent: { runId: parentRunId, path: report.path, depth: depth + 1 },
    });
  } catch (error) {
    // The same step's child, created meanwhile (runs_parent_step): it is the one.
    const raced = await deps.subflows.childAt(parentRunId, report.path);
    if (raced !== null) return raced;
    throw error;
  }
  if (accepted === null) {
    throw new FlowboxError(
      'FLOW_QUEUE_FULL',
      `flow ${flow.flowId} has as many runs waiting as it may; the sub-flow was not started`,
    );
  }
  const job: RunJobData = {
    version: 1,
    type: 'run-flow',
    runId: id,
    flowId: flow.flowId,
    flowVersionId: flow.flowVersionId,
    trigger,
    syncInstanceId: null,
    acceptedAt: Date.now(),
  };
  try {
    await deps.queue.add(job, accepted.rank);
  } catch (error) {
    // Its end is recorded, and as a failed child it answers a waiting parent.
    await deps.lifecycle.failUnqueued({ id, flowId: flow.flowId }, serializeError(error));
    throw error;
  }
  return id;
}
