import type { EngineJob, FlowDefinition, RunOutcome, StepDefinition, StepResult } from '@flowbox/protocol';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Clock } from '../../src/flows/interpreter/interpreter-context.ts';
import {
  type CheckpointStore,
  type CounterServer,
  createCheckpointStore,
  startCounterServer,
} from './checkpoint-store.ts';
import { useExecutorHarness } from './flow-executor-harness.ts';

/** A clock a test moves forward (`advance`) instead of waiting; sleeps in place are real. */
export interface TestClock extends Clock {
  advance(ms: number): void;
}

function testClock(): TestClock & { reset(): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    advance(ms) {
      offset += ms;
    },
    reset() {
      offset = 0;
    },
  };
}

/**
 * The durable runs' tests' setup: the executor harness with a test clock, the checkpoints in a
 * bucket of the shared versitygw, and a counter server the flows' code steps call (egress allows
 * it), so a test counts the steps that really ran.
 */
export function useDurableHarness() {
  const clock = testClock();
  const h = useExecutorHarness({ clock });
  let store: CheckpointStore;
  let counter: CounterServer;
  beforeAll(async () => {
    store = await createCheckpointStore();
    counter = await startCounterServer();
  });
  afterAll(async () => {
    store?.close();
    await counter?.close();
  });
  beforeEach(() => {
    clock.reset();
    counter.reset();
  });

  /** A job that can pause (checkpoint `n`'s upload), resuming from `from` when given. */
  const job = async (
    flow: FlowDefinition,
    mode: Partial<EngineJob>,
    options: { n?: number; from?: RunOutcome; values?: Record<string, unknown>; pauseMinMs?: number } = {},
  ): Promise<EngineJob> => {
    const base = await h.job(flow, mode);
    const port = Number(new URL(counter.url).port);
    const built: EngineJob = {
      ...base,
      checkpointUpload: await store.upload(options.n ?? 0),
      egress: { allowPublic: false, named: [{ host: '127.0.0.1', port }] },
      limits: { ...base.limits, pauseMinMs: options.pauseMinMs ?? 1_000 },
    };
    if (options.from !== undefined) {
      const key = options.from.pause?.checkpointKey;
      if (key === undefined) throw new Error('the run to resume did not pause');
      built.resume = await store.resume(key, options.values);
    }
    return built;
  };

  return {
    h,
    clock,
    job,
    get store() {
      return store;
    },
    get counter() {
      return counter;
    },
    /** Runs `flow` (resuming as `options` say) and returns its outcome. */
    async run(
      flow: FlowDefinition,
      mode: Partial<EngineJob>,
      options: Parameters<typeof job>[2] = {},
    ): Promise<RunOutcome> {
      const { outcome } = await h.executor.execute(await job(flow, mode, options));
      h.runIsolation.prepareNext();
      return outcome;
    },
  };
}

/** A code step that calls the counter server at `path` and returns its count. */
export const countingStep = (name: string, counterUrl: string, path = `/${name}`): StepDefinition => ({
  type: 'code',
  name,
  code: 'const r = await fetch(inputs.url); return (await r.json()).count;',
  input: { url: `${counterUrl}${path}` },
});

export const byPath = (steps: StepResult[], path: string) => steps.find((step) => step.path === path);

/** The outcome paused; its waiting points' paths, sorted. */
export function pausedAt(outcome: RunOutcome): string[] {
  expect(outcome.error).toBeUndefined();
  expect(outcome.status).toBe('PAUSED');
  expect(outcome.logKey).toBeNull();
  return (outcome.pause?.waits ?? []).map((wait) => wait.path).sort();
}
