import {
  CODE_STEP_FETCH_LIMITS,
  createEgressFetch,
  createFetchBudget,
  type EgressFetch,
} from '@flowbox/egress';
import type { InputValidators } from '@flowbox/pieces-framework/validate';
import { type EngineJob, FlowboxError, type FlowResponse } from '@flowbox/protocol';
import type { IsolatedRun } from '../isolate/run-isolation.ts';
import { createRunPieces } from '../pieces/run-pieces.ts';
import type { FlowExecutorDeps } from './flow-executor-deps.ts';
import type { StepRunnerDeps } from './host-leaf-executor.ts';

/** What preparing a run uses: the caches, the code runners, the run's isolation and its fetch. */
type RunPreparationDeps = Pick<
  FlowExecutorDeps,
  'bundles' | 'pieces' | 'codeRunners' | 'egressFetch' | 'runIsolation' | 'log'
>;

/** A job with `isolation: 'isolate'` gets its own context; others run in the engine (undefined). */
export async function openIsolatedRun(
  deps: RunPreparationDeps,
  job: EngineJob,
  run: StepRunnerDeps,
  respond: (response: FlowResponse) => Promise<void>,
): Promise<IsolatedRun | undefined> {
  if (job.isolation !== 'isolate') return undefined;
  if (deps.runIsolation === undefined) {
    throw new FlowboxError('INTERNAL', 'this engine cannot run a flow in an isolate of its own');
  }
  return deps.runIsolation.open({
    job,
    bundle: run.bundle,
    egressFetch: run.egressFetch,
    respond,
    log: run.log,
  });
}

/** The run's flow bundle and pieces from the worker's cache, and the code runner of its mode. */
export async function prepareRun(
  deps: RunPreparationDeps,
  job: EngineJob,
  inputs: InputValidators,
): Promise<StepRunnerDeps> {
  // In its own isolate a run loads its pieces there (isolate-snapshots.ts), never in the engine.
  const inEngine = job.isolation === 'isolate' ? [] : job.pieces;
  const [bundle, pieces] = await Promise.all([
    deps.bundles.load(job.bundlePath),
    Promise.all(inEngine.map((piece) => deps.pieces.load(piece))),
  ]);
  if (bundle.flowId !== job.flowId || bundle.flowVersionId !== job.flowVersionId) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `flow bundle ${job.bundlePath} holds ${bundle.flowId}/${bundle.flowVersionId}, not ${job.flowId}/${job.flowVersionId}`,
    );
  }
  const provided = new Set(job.pieces.map((piece) => `${piece.name}@${piece.version}`));
  const missing = bundle.pieces
    .map((piece) => `${piece.name}@${piece.version}`)
    .filter((p) => !provided.has(p));
  if (missing.length > 0) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `the flow needs ${missing.join(', ')}, which the job does not provide`,
    );
  }
  return {
    bundle,
    pieces: createRunPieces(pieces),
    codeRunner: deps.codeRunners[job.executionMode],
    egressFetch: lazyEgressFetch(deps, job),
    inputs,
    log: deps.log,
  };
}

/** Built on a run's first `fetch`: most runs make none. Every step of the run shares its budget. */
function lazyEgressFetch(deps: RunPreparationDeps, job: EngineJob): EgressFetch {
  let fetcher: EgressFetch | undefined;
  return (request, signal) => {
    if (fetcher === undefined) {
      const policy = job.egress;
      const budget = createFetchBudget(job.fetchLimits);
      fetcher =
        deps.egressFetch?.(policy, budget) ??
        createEgressFetch({ policy, limits: CODE_STEP_FETCH_LIMITS, budget });
    }
    return fetcher(request, signal);
  };
}
