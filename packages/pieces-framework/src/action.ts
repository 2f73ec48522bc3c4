import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { z } from 'zod';
import type { ActionContext } from './context.ts';

export interface ActionDefinition<S extends z.ZodType, O> {
  name: string;
  description: string;
  /** Validates (and may coerce or default) the step's resolved input before `run`. */
  input: S;
  run(input: z.output<S>, ctx: ActionContext): Promise<O> | O;
}

/** An action with its input type erased, as the engine holds it. */
export interface Action {
  readonly name: string;
  readonly description: string;
  /** The input schema, kept so the registry can publish it as JSON Schema (GET /v1/pieces/:name). */
  readonly input?: z.ZodType;
  /** Validates `rawInput` with the action's schema, then runs it. */
  execute(rawInput: unknown, ctx: ActionContext): Promise<unknown>;
}

export function createAction<S extends z.ZodType, O>(definition: ActionDefinition<S, O>): Action {
  return {
    name: definition.name,
    description: definition.description,
    input: definition.input,
    async execute(rawInput, ctx) {
      const parsed = definition.input.safeParse(rawInput);
      if (!parsed.success) {
        throw new FlowboxError(
          'INVALID_STEP_INPUT',
          `invalid input for ${definition.name}: ${formatIssues(parsed.error.issues)}`,
          { step: ctx.stepName },
        );
      }
      return definition.run(parsed.data, ctx);
    },
  };
}
