import { createHash } from 'node:crypto';
import {
  CODE_STEP_FETCH_LIMITS,
  createEgressFetch,
  createFetchBudget,
  type EgressFetch,
  type FetchBudget,
} from '@flowbox/egress';
import type { PollDedupe } from '@flowbox/pieces-framework';
import {
  type EgressPolicy,
  type EnginePollJob,
  FlowboxError,
  forUsers,
  type PollOutcome,
  serializeError,
} from '@flowbox/protocol';
import type { FlowBundleLoader } from '../flows/flow-bundle-loader.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import { openPieceFetch } from './piece-fetch.ts';
import type { PieceLoader } from './piece-loader.ts';

export interface PollExecutorDeps {
  bundles: FlowBundleLoader;
  pieces: PieceLoader;
  log: EngineLog;
  /** HTTP under the job's egress policy (SANDBOXED: the relay); default `@flowbox/egress`. */
  egressFetch?: ((policy: EgressPolicy, budget: FetchBudget) => EgressFetch) | undefined;
}

export interface PollExecutor {
  poll(job: EnginePollJob): Promise<PollOutcome>;
}

/**
 * Runs a polling trigger's `poll` in the engine: the flow's trigger (piece, trigger, input) comes
 * from its bundle, the piece from the worker's cache, and `ctx.fetch` is the egress fetch a run's
 * piece steps get. Each item gets its dedupe key from the trigger's definition; an item without
 * one fails the poll (POLL_FAILED naming the field and the item), so nothing of it starts a run.
 */
export function createPollExecutor(deps: PollExecutorDeps): PollExecutor {
  return {
    async poll(job) {
      try {
        const bundle = await deps.bundles.load(job.bundlePath);
        if (bundle.flowId !== job.flowId || bundle.flowVersionId !== job.flowVersionId) {
          throw new FlowboxError(
            'PROVISION_FAILED',
            `flow bundle ${job.bundlePath} holds ${bundle.flowId}/${bundle.flowVersionId}, not ${job.flowId}/${job.flowVersionId}`,
          );
        }
        const { trigger: step } = bundle.definition;
        const ref = job.pieces.find((piece) => piece.name === step.piece);
        if (ref === undefined) {
          throw new FlowboxError('PROVISION_FAILED', `the poll's job does not provide piece ${step.piece}`);
        }
        const piece = await deps.pieces.load(ref);
        const trigger = piece.triggers.get(step.trigger);
        if (trigger?.polling === undefined) {
          throw new FlowboxError(
            'POLL_FAILED',
            `piece '${step.piece}' has no polling trigger '${step.trigger}'`,
          );
        }
        const budget = createFetchBudget(job.fetchLimits);
        const egress =
          deps.egressFetch?.(job.egress, budget) ??
          createEgressFetch({ policy: job.egress, limits: CODE_STEP_FETCH_LIMITS, budget });
        const session = openPieceFetch(egress);
        try {
          const found = await trigger.polling.poll(
            {
              flowId: job.flowId,
              input: step.input,
              fetch: session.fetch,
              log: (level, msg, data) => deps.log(level, msg, { ...data, flowId: job.flowId, poll: true }),
            },
            { state: job.state ?? null },
          );
          if (typeof found !== 'object' || found === null || !Array.isArray(found.items)) {
            throw new FlowboxError('POLL_FAILED', 'poll: must answer { items: [...], state }');
          }
          const field = keyField(trigger.polling.dedupe, step.input);
          const items = found.items.map((item, index) => ({
            key: keyOf(trigger.polling?.dedupe.by ?? 'id', field, item, index),
            item: item ?? null,
          }));
          const state = found.state ?? null;
          const bytes = Buffer.byteLength(JSON.stringify({ items, state }));
          if (bytes > job.maxResultBytes) {
            throw new FlowboxError(
              'POLL_FAILED',
              `the poll answered ${items.length} items in ${bytes} bytes, over the ${job.maxResultBytes} a poll's result may hold (RUN_LOG_MAX_BYTES): answer fewer a poll, with a state to go on from`,
            );
          }
          return { type: 'ok', items, state };
        } finally {
          session.close();
        }
      } catch (error) {
        // A piece's own Error is the poll's failure (POLL_FAILED), not the engine's.
        return { type: 'error', error: forUsers(serializeError(error, 'POLL_FAILED')) };
      }
    },
  };
}

function keyField(dedupe: PollDedupe, input: Record<string, unknown>): string {
  const field = typeof dedupe.field === 'function' ? dedupe.field(input) : dedupe.field;
  if (typeof field !== 'string' || field === '') {
    throw new FlowboxError('POLL_FAILED', 'dedupe.field: the trigger names no key field');
  }
  return field;
}

/**
 * `id`: the field as text. `timestamp`: the time (as epoch ms) with a hash of the item, so two
 * items of the same moment are two keys, and an item seen again is the same key.
 */
function keyOf(by: 'id' | 'timestamp', field: string, item: unknown, index: number): string {
  const value =
    typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
  if (by === 'id') {
    if (
      (typeof value === 'string' && value !== '') ||
      (typeof value === 'number' && Number.isFinite(value))
    ) {
      const key = String(value);
      if (key.length <= 1000) return key;
    }
    throw new FlowboxError(
      'POLL_FAILED',
      `item ${index} has no '${field}' (the dedupe key): a non-empty string or a number of at most 1000 characters`,
    );
  }
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new FlowboxError(
      'POLL_FAILED',
      `item ${index} has no '${field}' (the dedupe timestamp) that reads as a date`,
    );
  }
  const digest = createHash('sha256').update(JSON.stringify(item)).digest('hex').slice(0, 32);
  return `${new Date(ms).toISOString()}#${digest}`;
}
