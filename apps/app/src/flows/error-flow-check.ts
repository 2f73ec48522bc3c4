import { FlowboxError, type FlowDefinition } from '@flowbox/protocol';
import type { FlowsRepository } from './flows-repository.ts';

/**
 * A version's `onFailure` must name another flow that exists (INVALID_FLOW otherwise): a flow is
 * not its own error flow, and a name that reaches nothing would fail silently at the first failed
 * run. A flow deleted after this check is recorded on the failed runs that name it.
 */
export async function checkErrorFlow(
  flows: Pick<FlowsRepository, 'getFlow'>,
  flowId: string,
  definition: Pick<FlowDefinition, 'onFailure'>,
): Promise<void> {
  const { onFailure } = definition;
  if (onFailure === undefined) return;
  if (onFailure === flowId) {
    throw new FlowboxError(
      'INVALID_FLOW',
      `definition.onFailure: flow ${flowId} cannot be its own error flow`,
    );
  }
  if ((await flows.getFlow(onFailure)) === null) {
    throw new FlowboxError(
      'INVALID_FLOW',
      `definition.onFailure: flow ${onFailure} does not exist (create the error flow first)`,
    );
  }
}
