import { FlowboxError, type LoopStepDefinition, stepPath, WAITS_ROOT, walkSteps } from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { containerResult, failStep, type RunContext } from './interpreter-context.ts';
import { childFrame, outputsIn, type ScopeFrame } from './run-scope.ts';
import { holdsWaits, iterationWaits } from './wait-urls.ts';

/**
 * A loop: its body once per item of `items`, `concurrency` iterations at a time, each in a frame
 * of its own (`<loop>.item`, `<loop>.index`, the body's outputs) under the loop's frame. Its
 * output is `{ iterations: [ {<step>: output, ...}, ... ] }` in item order whatever the
 * concurrency. A failure in an iteration ends the run: no further iteration starts, and those
 * running stop before their next step. Items that are not an array, or more than
 * LOOP_MAX_ITERATIONS, fail the loop before any iteration. An iteration that blocks at a waiting
 * point keeps its place among the `concurrency` (no iteration starts in its stead); the others go
 * on. A loop with a blocked iteration is not recorded: it runs again when the run resumes, its
 * finished iterations' steps replayed.
 */
export async function runLoop(
  context: RunContext,
  step: LoopStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, false);
  const startedAt = new Date().toISOString();
  const started = performance.now();
  let items: unknown;
  try {
    items = resolveTemplates(step.items, frame, step.name, 'items');
    checkItems(step, items, context.limits.loopMaxIterations);
  } catch (error) {
    const result = containerResult(step.name, path, 'loop', startedAt, started, { items: step.items });
    failStep(context, path, record, result, started, error);
    return false;
  }
  const list = items as unknown[];
  const names = walkSteps({ steps: step.steps }).map((visit) => visit.step.name);
  const iterations: (Record<string, unknown> | null)[] = list.map(() => null);
  const waitUrls = context.durable.waitUrls;
  const withWaits = waitUrls !== undefined && holdsWaits(step.steps);
  let thrown: { error: unknown } | undefined;
  let blocked = false;
  let next = 0;
  // `concurrency` runners, each taking the next item; one whose iteration blocked takes no more.
  const runner = async (): Promise<void> => {
    while (next < list.length) {
      if (context.ending !== undefined || thrown !== undefined) return;
      const index = next++;
      const prefix = `${path}[${index}]`;
      const extra: Record<string, unknown> = { [step.name]: { item: list[index], index } };
      if (withWaits) extra[WAITS_ROOT] = iterationWaits(frame, step.steps, prefix, waitUrls);
      const iteration = childFrame(frame, extra);
      let stopped = false;
      try {
        stopped = await context.runBody(step.steps, iteration, prefix);
      } catch (error) {
        // A system failure (a refused report): the run ends once the running iterations did.
        thrown ??= { error };
      }
      iterations[index] = outputsIn(iteration, names);
      if (stopped) {
        blocked = true;
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(step.concurrency, list.length) }, runner));
  if (thrown !== undefined) throw thrown.error;
  if (blocked && context.ending === undefined) return true;
  const output = { iterations };
  const result = containerResult(step.name, path, 'loop', startedAt, started, {
    items: list.length,
    concurrency: step.concurrency,
  });
  result.output = output;
  const ended = context.ending;
  if (ended?.ending.kind === 'failed' && ended.path.startsWith(`${path}[`)) {
    result.status = 'FAILED';
    result.error = {
      ...ended.ending.error,
      message: `${ended.path} failed: ${ended.ending.error.message}`,
      step: step.name,
    };
  }
  frame[step.name] = output;
  record(result);
  return blocked;
}

function checkItems(step: LoopStepDefinition, items: unknown, max: number): void {
  if (!Array.isArray(items)) {
    throw new FlowboxError(
      'INVALID_STEP_INPUT',
      `loop ${step.name}: items must resolve to an array, not ${typeName(items)}`,
    );
  }
  if (items.length > max) {
    throw new FlowboxError(
      'LOOP_TOO_MANY_ITERATIONS',
      `loop ${step.name}: ${items.length} items, more than the ${max} a loop may run (LOOP_MAX_ITERATIONS)`,
    );
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
