import { FlowboxError, type FlowDefinition, type WaitStepDefinition, walkSteps } from '@flowbox/protocol';
import type { RunResumer } from '../runs/run-resumer.ts';
import { isWaitToken } from './wait-token.ts';
import type { WaitsRepository } from './waits-repository.ts';

/** Which of a wait's URLs was called (durable.ts `waitStepUrls`). */
export type WaitRoute = 'resume' | 'sync' | 'approve' | 'reject';

/** What a wait's step gets as its output: the request, and for approvals the decision. */
export interface WaitValue {
  method: string;
  body: unknown;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  approved?: boolean;
}

export interface WaitAnswerDeps {
  waits: WaitsRepository;
  /** The flow version's definition (its wait steps), by id. */
  definition(flowVersionId: string): Promise<FlowDefinition | null>;
  resumer: Pick<RunResumer, 'resume'>;
  /** WAIT_URL_SECRET: the runs' wait keys derive from it (wait-token.ts). */
  secret: string;
}

export interface WaitCall {
  runId: string;
  /** The wait's run path (`approval`, `each[2]/approval`), decoded from the URL. */
  path: string;
  token: string;
  route: WaitRoute;
  request: Omit<WaitValue, 'approved'>;
  /** `/sync`: this app, which holds the caller until the run's next response. */
  syncInstanceId?: string;
}

/** A run path's step as the definition names it: `each[2]/approval` is `each/approval`. */
export function staticPath(path: string): string {
  return path.replace(/\[\d+\]/g, '');
}

/** The wait step at a run path of `definition`, or null when the path names none. */
export function waitStepAt(definition: FlowDefinition, path: string): WaitStepDefinition | null {
  const target = staticPath(path);
  for (const { step, path: at } of walkSteps(definition)) {
    if (at === target) return step.type === 'wait' ? step : null;
  }
  return null;
}

/**
 * The step's output for this call: an approval's URLs add `approved`; the plain and `/sync` URLs
 * are a request wait's. A URL of the other kind names no wait (null).
 */
export function waitValue(
  kind: WaitStepDefinition['kind'],
  route: WaitRoute,
  request: WaitCall['request'],
): WaitValue | null {
  if (kind === 'approval') {
    if (route === 'approve') return { ...request, approved: true };
    if (route === 'reject') return { ...request, approved: false };
    return null;
  }
  return route === 'resume' || route === 'sync' ? { ...request } : null;
}

/**
 * Answers a wait: the token is the credential (a wrong one is answered as an unknown run, so it
 * tells nothing of the run), the run must not have ended (410), the wait answers once (409), and
 * a run paused there resumes. A run that has not reached its wait yet keeps the answer: its
 * pause finds it and resumes at once.
 */
export async function answerWait(deps: WaitAnswerDeps, call: WaitCall): Promise<void> {
  const notFound = () => new FlowboxError('RUN_NOT_FOUND', `run ${call.runId} not found`);
  if (!isWaitToken(deps.secret, call.runId, call.path, call.token)) throw notFound();
  const run = await deps.waits.run(call.runId);
  if (run === null) throw notFound();
  const definition = await deps.definition(run.flowVersionId);
  const step = definition === null ? null : waitStepAt(definition, call.path);
  const value = step === null ? null : waitValue(step.kind, call.route, call.request);
  if (step === null || value === null) {
    throw new FlowboxError('RUN_NOT_FOUND', `run ${call.runId} has no ${call.route} URL at ${call.path}`);
  }
  if (run.finished) {
    throw new FlowboxError('WAIT_ENDED', `run ${call.runId} has ended (${run.status}): nothing waits`);
  }
  const answered = await deps.waits.answer(call.runId, call.path, step.kind, value);
  if (answered === null) {
    throw new FlowboxError(
      'WAIT_ALREADY_RESUMED',
      `the wait ${call.path} of run ${call.runId} was answered already`,
    );
  }
  if (call.syncInstanceId !== undefined) await deps.waits.answerTo(call.runId, call.syncInstanceId);
  // Only a run paused at this wait resumes: one paused elsewhere (a delay, another wait) would
  // only pause again; its pause at this wait finds the answer and resumes at once.
  if (!answered.waiting) return;
  await deps.resumer.resume(call.runId, {
    cause: 'request',
    ...(call.syncInstanceId === undefined ? {} : { syncInstanceId: call.syncInstanceId }),
  });
}
