import { FlowboxError, type LeafStepDefinition, type StepResult } from '@flowbox/protocol';
import type { RunContext } from './interpreter-context.ts';
import type { LeafExecutor } from './leaf-executor.ts';
import { runLeaf } from './leaf-step.ts';
import type { ScopeFrame } from './run-scope.ts';

/** A tested step never pauses, resumes or starts a sub-flow: it has no run to do it in. */
const NO_RUN: RunContext['durable'] = {
  clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
  pauseMinMs: Number.POSITIVE_INFINITY,
  maxPauseMs: 0,
  memo: undefined,
  record: undefined,
  values: {},
  waitUrls: undefined,
  startSubflow: () => Promise.reject(new FlowboxError('INTERNAL', 'a step test starts no sub-flow')),
};

/**
 * A step test's one leaf (flows/step-test.ts): run as a run's leaf is (its templates resolved
 * over `frame`, its `timeoutMs`, its failure recorded), but alone and once: nothing before or
 * after it, no response to send, its `retry` left out. Returns the step's record.
 */
export async function testLeaf(
  step: LeafStepDefinition,
  frame: ScopeFrame,
  prefix: string,
  deps: { leaves: LeafExecutor; limits: RunContext['limits'] },
): Promise<StepResult> {
  let recorded: StepResult | undefined;
  const context: RunContext = {
    leaves: deps.leaves,
    limits: deps.limits,
    sink: {
      beforeStep() {},
      position() {},
      begin: () => (result) => {
        recorded = result;
      },
    },
    // A tested step answers no caller: what a piece would send is left out.
    respond: async () => {},
    durable: NO_RUN,
    ending: undefined,
    waits: [],
    fail() {},
    block() {},
    runBody: () => Promise.reject(new FlowboxError('INTERNAL', 'a step test runs no body')),
  };
  const { retry: _once, ...alone } = step;
  await runLeaf(context, alone, frame, prefix);
  if (recorded === undefined) throw new FlowboxError('INTERNAL', `step ${step.name} recorded nothing`);
  return recorded;
}
