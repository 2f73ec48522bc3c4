import { literalInputProblems } from '@flowbox/pieces-framework/validate';
import { FlowboxError, type FlowDefinition, findTemplateReferences, walkSteps } from '@flowbox/protocol';
import type { PieceIndex } from '../pieces/piece-registry.ts';

/**
 * Refuses (INVALID_FLOW naming the step and field) a piece step whose input, as written, its
 * pinned action's input schema (the registry's) refuses: a literal value of the wrong type or
 * out of bounds, a required field missing, a field the action does not have. A field whose value
 * holds a template is left to the run, which checks it resolved, as it checks every input. A
 * version recorded before the registry kept input schemas is not checked here.
 */
export function checkPieceInputs(definition: FlowDefinition, pieces: PieceIndex): void {
  for (const { step, at } of walkSteps(definition)) {
    if (step.type !== 'piece') continue;
    const action = pieces.resolve(step.piece, step.version)?.actions?.find((a) => a.name === step.action);
    if (action === undefined) continue;
    const templated = (field: string) => findTemplateReferences(step.input[field]).length > 0;
    const problems = literalInputProblems(action.name, action.inputSchema, step.input, templated);
    if (problems.length > 0) {
      throw new FlowboxError('INVALID_FLOW', problems.map((problem) => `${at}.input.${problem}`).join('; '));
    }
  }
}
