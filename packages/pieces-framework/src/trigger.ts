import type { TriggerPayload } from '@flowbox/protocol';
import type { TriggerContext } from './context.ts';

export interface TriggerDefinition<O> {
  name: string;
  description: string;
  /** Turns the request that started the run into the trigger step's output. */
  run(payload: TriggerPayload, ctx: TriggerContext): Promise<O> | O;
}

/** A trigger with its output type erased, as the engine holds it. */
export interface Trigger {
  readonly name: string;
  readonly description: string;
  execute(payload: TriggerPayload, ctx: TriggerContext): Promise<unknown>;
}

export function createTrigger<O>(definition: TriggerDefinition<O>): Trigger {
  return {
    name: definition.name,
    description: definition.description,
    async execute(payload, ctx) {
      return definition.run(payload, ctx);
    },
  };
}
