import type { TriggerPayload } from '@flowbox/protocol';
import type { PieceFetch, PieceLog, TriggerContext } from './context.ts';

export interface TriggerDefinition<O> {
  name: string;
  description: string;
  /** Turns the request that started the run into the trigger step's output. */
  run(payload: TriggerPayload, ctx: TriggerContext): Promise<O> | O;
}

/**
 * How a polling trigger's items are told apart. `id`: the item's `field` is its key (a string
 * or number); `timestamp`: its `field` is a date (ISO 8601 or epoch ms), and an item is new when
 * its key (that time with the item's content) was not seen. `field` may depend on the trigger's
 * input (a piece that lets the flow name it).
 */
export interface PollDedupe {
  by: 'id' | 'timestamp';
  field: string | ((input: Record<string, unknown>) => string);
}

/** What a poll sees: the trigger's input as the flow gives it, and the run's HTTP and log. */
export interface PollContext {
  readonly flowId: string;
  readonly input: Record<string, unknown>;
  /** HTTP under the worker's egress policy, as an action's `ctx.fetch`. */
  fetch: PieceFetch;
  log: PieceLog;
}

/** One poll's answer: what the source holds now (old items included), and the state to poll from next. */
export interface PollResult {
  items: unknown[];
  /** Any JSON value; null or absent keeps none. The first poll gets null. */
  state?: unknown;
}

export interface PollingTriggerDefinition {
  name: string;
  description: string;
  strategy: 'polling';
  dedupe: PollDedupe;
  poll(ctx: PollContext, previous: { state: unknown }): Promise<PollResult> | PollResult;
}

/** A trigger with its output type erased, as the engine holds it. */
export interface Trigger {
  readonly name: string;
  readonly description: string;
  /** `polling`: the app polls it on an interval and starts one run per new item; absent: a webhook's. */
  readonly strategy?: 'polling';
  execute(payload: TriggerPayload, ctx: TriggerContext): Promise<unknown>;
  /** A polling trigger's poll and its dedupe key (see PollingTriggerDefinition). */
  readonly polling?: {
    dedupe: PollDedupe;
    poll(ctx: PollContext, previous: { state: unknown }): Promise<PollResult>;
  };
}

export function createTrigger<O>(definition: TriggerDefinition<O> | PollingTriggerDefinition): Trigger {
  if ('strategy' in definition) return createPollingTrigger(definition);
  return {
    name: definition.name,
    description: definition.description,
    async execute(payload, ctx) {
      return definition.run(payload, ctx);
    },
  };
}

/**
 * A polling trigger: each new item starts one run, whose trigger output is the item (the run's
 * trigger body). Without a dedupe key it is refused when the piece is built.
 */
function createPollingTrigger(definition: PollingTriggerDefinition): Trigger {
  const { dedupe } = definition;
  if (
    definition.strategy !== 'polling' ||
    dedupe === undefined ||
    (dedupe.by !== 'id' && dedupe.by !== 'timestamp') ||
    (typeof dedupe.field !== 'function' && (typeof dedupe.field !== 'string' || dedupe.field === ''))
  ) {
    throw new Error(
      `polling trigger ${definition.name} needs dedupe: { by: 'id' | 'timestamp', field } naming its items' key`,
    );
  }
  return {
    name: definition.name,
    description: definition.description,
    strategy: 'polling',
    async execute(payload) {
      return payload.body;
    },
    polling: {
      dedupe,
      async poll(ctx, previous) {
        return definition.poll(ctx, previous);
      },
    },
  };
}
