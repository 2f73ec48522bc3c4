import {
  type FlowDefinition,
  forUsers,
  type SerializedError,
  type StepDefinition,
  type StepResult,
  serializeError,
  stepPath,
  WAITS_ROOT,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { runDelay } from './delay-step.ts';
import type { Ending, InterpreterDeps, RunContext } from './interpreter-context.ts';
import { runLeaf } from './leaf-step.ts';
import { runLoop } from './loop-step.ts';
import { runRouter } from './router-step.ts';
import type { ScopeFrame } from './run-scope.ts';
import { runStop } from './stop-step.ts';
import { runSubflow } from './subflow-step.ts';
import { runWait } from './wait-step.ts';
import { holdsWaits, waitUrlsIn } from './wait-urls.ts';

/**
 * The flow language's one implementation: walks a flow's tree (the trigger, then its steps,
 * routers' branches and loops' bodies) in the engine's realm for every RUN_ISOLATION mode,
 * resolving each step's templates over the scope here and handing only leaves (a piece's
 * action or trigger, a code step) to the mode's leaf executor. Records every step through the
 * sink with its path. `frame` is the run's scope (the connections); the steps' outputs go in it.
 * A step that blocks at a waiting point stops its body; bodies running beside it go on; when
 * nothing can go on and nothing failed or stopped, the run ends `paused` with its waiting points.
 */
export async function interpretFlow(
  definition: Pick<FlowDefinition, 'trigger' | 'steps'>,
  frame: ScopeFrame,
  deps: InterpreterDeps,
): Promise<Ending> {
  const context: RunContext = {
    ...deps,
    ending: undefined,
    waits: [],
    fail(path, error) {
      context.ending ??= { ending: { kind: 'failed', error }, path };
    },
    block(point, state) {
      context.waits.push(point);
      deps.durable.record?.set(point.path, state);
    },
    async runBody(steps, bodyFrame, prefix) {
      for (const step of steps) {
        if (context.ending !== undefined) return false;
        deps.sink.beforeStep();
        if (await runStep(context, step, bodyFrame, prefix)) return true;
      }
      return false;
    },
  };
  const { waitUrls } = deps.durable;
  if (waitUrls !== undefined && holdsWaits(definition.steps)) {
    frame[WAITS_ROOT] = waitUrlsIn(definition.steps, '', waitUrls);
  }
  deps.sink.beforeStep();
  deps.sink.position(definition.steps.length);
  await runTrigger(context, definition.trigger, frame);
  for (const [index, step] of definition.steps.entries()) {
    if (context.ending !== undefined) break;
    deps.sink.beforeStep();
    const leafLike = step.type === 'piece' || step.type === 'code';
    deps.sink.position(step.type === 'stop' ? 0 : leafLike ? definition.steps.length - 1 - index : Infinity);
    if (await runStep(context, step, frame, '')) break;
  }
  if (context.ending !== undefined) return context.ending.ending;
  return context.waits.length > 0 ? { kind: 'paused', waits: context.waits } : { kind: 'done' };
}

/** Runs one step; resolves true when it blocked at a waiting point. */
function runStep(
  context: RunContext,
  step: StepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  switch (step.type) {
    case 'piece':
    case 'code':
      return runLeaf(context, step, frame, prefix);
    case 'router':
      return runRouter(context, step, frame, prefix);
    case 'loop':
      return runLoop(context, step, frame, prefix);
    case 'stop':
      return runStop(context, step, frame, prefix);
    case 'delay':
      return runDelay(context, step, frame, prefix);
    case 'wait':
      return runWait(context, step, frame, prefix);
    case 'flow':
      return runSubflow(context, step, frame, prefix);
  }
}

async function runTrigger(
  context: RunContext,
  trigger: FlowDefinition['trigger'],
  frame: ScopeFrame,
): Promise<void> {
  const path = stepPath('', trigger.name);
  const record = context.sink.begin(trigger.name, path, true);
  const startedAt = new Date().toISOString();
  const started = performance.now();
  let input: unknown = trigger.input;
  let output: unknown;
  let error: SerializedError | undefined;
  try {
    input = resolveTemplates(trigger.input, frame, trigger.name);
    const outcome = await context.leaves.trigger(input);
    output = outcome.output;
    error = outcome.error;
  } catch (thrown) {
    error = forUsers(serializeError(thrown, 'STEP_FAILED'));
  }
  const kind = `${trigger.piece}/${trigger.trigger}`;
  const result: StepResult = {
    name: trigger.name,
    path,
    kind,
    status: 'SUCCEEDED',
    input,
    startedAt,
    durationMs: 0,
  };
  if (error !== undefined) {
    result.status = 'FAILED';
    result.error = { ...error, step: trigger.name };
    context.fail(path, result.error);
  } else {
    if (output !== undefined) result.output = output;
    frame[trigger.name] = output;
  }
  result.durationMs = performance.now() - started;
  record(result);
}
