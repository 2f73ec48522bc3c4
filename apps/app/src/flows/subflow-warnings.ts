import { type FlowDefinition, walkSteps } from '@flowbox/protocol';
import type { FlowsRepository } from './flows-repository.ts';

/**
 * A `flow` step naming a flow that is not there to run (missing, unpublished or disabled): a
 * warning, not a refusal, so a parent may be published before its child; until the child is
 * live, the step fails FLOW_NOT_FOUND when a run reaches it.
 */
export async function subflowWarnings(
  definition: Pick<FlowDefinition, 'steps'>,
  flows: Pick<FlowsRepository, 'findPublished'>,
): Promise<string[]> {
  const warnings: string[] = [];
  for (const { step, path } of walkSteps(definition)) {
    if (step.type !== 'flow') continue;
    const child = await flows.findPublished(step.flowId);
    if (child === null || !child.enabled) {
      warnings.push(
        `step '${path}' starts flow '${step.flowId}', which does not exist, is not published or is disabled: runs that reach it fail FLOW_NOT_FOUND until it is live`,
      );
    }
  }
  return warnings;
}
