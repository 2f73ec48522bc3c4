import {
  CONNECTIONS_ROOT,
  DEFAULT_LOOP_MAX_ITERATIONS,
  type EngineJob,
  type ExecuteResult,
  FlowboxError,
  forUsers,
  type LeafStepDefinition,
  type RunOutcome,
  runStatusOf,
  type SerializedError,
  type StepResult,
  type StepTest,
  serializeError,
  walkSteps,
} from '@flowbox/protocol';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { IsolatedRun } from '../isolate/run-isolation.ts';
import { createHostLeafExecutor, type StepRunnerDeps } from './host-leaf-executor.ts';
import type { LeafExecutor } from './interpreter/leaf-executor.ts';
import { testLeaf } from './interpreter/leaf-test.ts';
import { createLogBudget } from './log-budget.ts';
import { createRedactor } from './redactor.ts';

/** What a step test runs with: the run's own preparation (run-preparation.ts), so its sandbox is a run's. */
export interface StepTestDeps {
  /** The bundle, pieces and code runner of the job's mode, as a run gets them. */
  prepare(): Promise<StepRunnerDeps>;
  /** The run's own isolate when the job says `isolate`, else undefined. */
  openIsolated(run: StepRunnerDeps): Promise<IsolatedRun | undefined>;
  log: EngineLog;
}

/**
 * One step of the job's flow alone (EngineJob.test): the leaf executor of the job's isolation
 * mode runs it, its templates resolved over the sample data and the job's connections, under the
 * job's egress policy and limits. Nothing is reported while it runs and no log is uploaded; the
 * outcome's one step, redacted as a run's steps are, is the answer.
 */
export async function executeStepTest(
  job: EngineJob,
  test: StepTest,
  deps: StepTestDeps,
): Promise<Pick<ExecuteResult, 'outcome' | 'timings'>> {
  const started = performance.now();
  const redactor = createRedactor({ connections: job.connections, trigger: job.trigger });
  const shown = <T>(value: T): T => (redactor === null ? value : redactor.value(value));
  let result: StepResult | undefined;
  let error: SerializedError | undefined;
  let isolated: IsolatedRun | undefined;
  let leaves: LeafExecutor | undefined;
  try {
    const run = await deps.prepare();
    if (redactor !== null)
      run.log = (level, msg, data) => deps.log(level, redactor.text(msg), redactor.value(data));
    const { step, prefix } = testedStep(run, test.step);
    isolated = await deps.openIsolated(run);
    leaves = isolated?.leaves ?? createHostLeafExecutor(run, job, async () => {});
    // The connections last: sample data cannot stand in for the values the version resolves.
    const frame: Record<string, unknown> = { ...test.data };
    if (job.connections !== undefined) frame[CONNECTIONS_ROOT] = job.connections;
    const ran = await testLeaf(step, frame, prefix, {
      leaves,
      limits: {
        codeStepTimeoutMs: job.limits.codeStepTimeoutMs,
        loopMaxIterations: job.limits.loopMaxIterations ?? DEFAULT_LOOP_MAX_ITERATIONS,
      },
    });
    result = createLogBudget(job.logUpload.maxBytes).fit(shown(ran));
  } catch (thrown) {
    // A bundle or piece the cache could not give, an isolate that refused a piece.
    error = forUsers(shown(serializeError(thrown)));
    deps.log('warn', 'the step test failed outside its step', { runId: job.runId, error });
  } finally {
    leaves?.close?.();
    isolated?.close();
  }
  const outcome: RunOutcome = {
    status: 'SUCCEEDED',
    steps: result === undefined ? [] : [result],
    logKey: null,
  };
  const failure = result?.error ?? error;
  if (failure !== undefined) {
    outcome.error = failure;
    outcome.status = runStatusOf(failure.code);
  }
  return { outcome, timings: { runMs: performance.now() - started, logPersistMs: 0 } };
}

/** The leaf named `name` and the path of the body it sits in (`route/big`, `each`; '' at the top). */
function testedStep(run: StepRunnerDeps, name: string): { step: LeafStepDefinition; prefix: string } {
  const visit = walkSteps(run.bundle.definition).find((candidate) => candidate.step.name === name);
  // The app checked both against the same version; a bundle that disagrees is not the version's.
  if (visit === undefined) throw new FlowboxError('STEP_NOT_FOUND', `the flow has no step ${name}`);
  const { step } = visit;
  if (step.type !== 'piece' && step.type !== 'code') {
    throw new FlowboxError(
      'STEP_NOT_TESTABLE',
      `step ${name} is a ${step.type} step; only piece and code steps can be tested`,
    );
  }
  const cut = visit.path.lastIndexOf('/');
  return { step, prefix: cut < 0 ? '' : visit.path.slice(0, cut) };
}
