import {
  FlowboxError,
  OTHERWISE,
  type RouterStepDefinition,
  type StepDefinition,
  type StepResult,
  stepPath,
  walkSteps,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { type ResolvedCondition, whenHolds } from './conditions.ts';
import { containerResult, endStep, failStep, type RunContext } from './interpreter-context.ts';
import { childFrame, outputsIn, type ScopeFrame } from './run-scope.ts';

interface Taken {
  name: string;
  steps: readonly StepDefinition[];
}

/**
 * A router: its conditions evaluated over `frame` in branch order, then the branch that holds
 * first (`first`) or every one that holds (`all`, at once with `parallel`), else `otherwise`.
 * Each branch not taken is recorded once, SKIPPED with why. Its output, after its branches ran:
 * `{ branch }` (`first`, null when nothing ran) or `{ branches }` (`all`). A branch's steps write
 * their outputs in the router's frame (a parallel branch in a frame of its own, merged after).
 * A branch that blocks at a waiting point stops the branches after it (parallel ones go on); the
 * router is then not recorded: it runs again, its conditions over the replayed outputs, when
 * the run resumes.
 */
export async function runRouter(
  context: RunContext,
  step: RouterStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, false);
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const result = containerResult(step.name, path, 'router', startedAt, started, { mode: step.mode });
  const held: string[] = [];
  const skips: [string, string][] = [];
  try {
    for (const branch of step.branches) {
      if (step.mode === 'first' && held.length > 0) {
        skips.push([branch.name, `branch ${held[0]} ran first`]);
        continue;
      }
      if (branchHolds(step.name, branch.name, branch.when, frame)) held.push(branch.name);
      else skips.push([branch.name, `the conditions of branch ${branch.name} did not hold`]);
    }
  } catch (error) {
    failStep(context, path, record, result, started, error);
    return false;
  }
  const taken: Taken[] = step.branches
    .filter((branch) => held.includes(branch.name))
    .map((branch) => ({ name: branch.name, steps: branch.steps }));
  if (step.otherwise !== undefined) {
    if (taken.length === 0) taken.push({ name: OTHERWISE, steps: step.otherwise });
    else skips.push([OTHERWISE, 'a branch ran']);
  }
  for (const [name, why] of skips)
    context.sink.begin(name, `${path}/${name}`, false)(skipped(name, `${path}/${name}`, why));

  let blocked = false;
  if (step.mode === 'all' && step.parallel === true && taken.length > 1) {
    blocked = await runParallel(context, taken, frame, path);
  } else {
    for (const branch of taken) {
      blocked = await context.runBody(branch.steps, frame, `${path}/${branch.name}`);
      if (blocked) break;
    }
  }
  if (blocked && context.ending === undefined) return true;
  const names = taken.map((branch) => branch.name);
  const output = step.mode === 'first' ? { branch: names[0] ?? null } : { branches: names };
  result.input = { mode: step.mode, held };
  result.output = output;
  const ended = context.ending;
  if (ended?.ending.kind === 'failed' && ended.path.startsWith(`${path}/`)) {
    result.status = 'FAILED';
    result.error = {
      ...ended.ending.error,
      message: `${ended.path} failed: ${ended.ending.error.message}`,
      step: step.name,
    };
  }
  frame[step.name] = output;
  endStep(record, result, started);
  return blocked;
}

/**
 * Whether a branch's `when` holds over `frame`. A side whose path reads nothing is undefined, so
 * `exists`, `not_exists` and `empty` test a field the data does not have.
 */
function branchHolds(
  router: string,
  name: string,
  when: RouterStepDefinition['branches'][number]['when'],
  frame: ScopeFrame,
): boolean {
  try {
    return whenHolds(resolveTemplates(when, frame, router, 'when') as ResolvedCondition[][]);
  } catch (error) {
    if (error instanceof FlowboxError) throw new FlowboxError(error.code, `branch ${name}: ${error.message}`);
    throw error;
  }
}

/**
 * Branches at once, each in a frame of its own; their outputs land in `frame` in branch order.
 * Resolves true when any branch blocked.
 */
async function runParallel(
  context: RunContext,
  taken: Taken[],
  frame: ScopeFrame,
  path: string,
): Promise<boolean> {
  const frames = taken.map(() => childFrame(frame));
  const settled = await Promise.allSettled(
    taken.map((branch, index) =>
      context.runBody(branch.steps, frames[index] ?? frame, `${path}/${branch.name}`),
    ),
  );
  taken.forEach((branch, index) => {
    const names = walkSteps({ steps: [...branch.steps] }).map((visit) => visit.step.name);
    Object.assign(frame, outputsIn(frames[index] ?? {}, names));
  });
  let blocked = false;
  for (const outcome of settled) {
    if (outcome.status === 'rejected') throw outcome.reason;
    blocked ||= outcome.value;
  }
  return blocked;
}

function skipped(name: string, path: string, skipReason: string): StepResult {
  return {
    name,
    path,
    kind: 'branch',
    status: 'SKIPPED',
    input: null,
    skipReason,
    startedAt: new Date().toISOString(),
    durationMs: 0,
  };
}
