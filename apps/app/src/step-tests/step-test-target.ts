import { FlowboxError, type LeafStepDefinition, walkSteps } from '@flowbox/protocol';
import type { FlowsRepository, FlowVersionRecord } from '../flows/flows-repository.ts';

/**
 * Which version a step test runs: the one named, the latest (`latest`), or by default the
 * published one (the latest when none is published).
 */
export async function testedVersion(
  flows: Pick<FlowsRepository, 'getFlow' | 'getVersion' | 'listVersions'>,
  flowId: string,
  wanted: string | undefined,
): Promise<FlowVersionRecord> {
  const flow = await flows.getFlow(flowId);
  if (flow === null) throw new FlowboxError('FLOW_NOT_FOUND', `flow ${flowId} does not exist`);
  const id = wanted ?? flow.publishedVersionId;
  if (id !== null && id !== 'latest') {
    const version = await flows.getVersion(id);
    if (version === null || version.flowId !== flowId) {
      throw new FlowboxError('FLOW_VERSION_NOT_FOUND', `flow ${flowId} has no version ${id}`);
    }
    return version;
  }
  const versions = await flows.listVersions(flowId);
  const latest = versions.reduce<FlowVersionRecord | undefined>(
    (last, version) => (last === undefined || version.number > last.number ? version : last),
    undefined,
  );
  if (latest === undefined) throw new FlowboxError('FLOW_VERSION_NOT_FOUND', `flow ${flowId} has no version`);
  return latest;
}

/** The piece or code step named `name` in the version's tree; 404 naming its steps, 400 for another kind. */
export function testedStep(version: FlowVersionRecord, name: string): LeafStepDefinition {
  const { definition } = version;
  const visits = walkSteps(definition);
  const visit = visits.find((candidate) => candidate.step.name === name);
  if (visit === undefined) {
    if (name === definition.trigger.name) {
      throw new FlowboxError(
        'STEP_NOT_TESTABLE',
        `${name} is the flow's trigger; only piece and code steps can be tested (give the trigger's output in data)`,
      );
    }
    throw new FlowboxError(
      'STEP_NOT_FOUND',
      `flow ${version.flowId} (version ${version.number}) has no step ${name}; its steps: ${visits.map((v) => v.step.name).join(', ') || 'none'}`,
    );
  }
  const { step } = visit;
  if (step.type !== 'piece' && step.type !== 'code') {
    throw new FlowboxError(
      'STEP_NOT_TESTABLE',
      `step ${name} is a ${step.type} step; only piece and code steps can be tested`,
    );
  }
  return step;
}
