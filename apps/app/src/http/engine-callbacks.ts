import { type EngineReport, FlowboxError, type SubflowStart } from '@flowbox/protocol';
import { type Tracer, traced } from '@flowbox/tracing';
import type { EndedRuns } from '../runs/ended-runs.ts';
import type { RunProgressStore } from '../runs/run-progress-store.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import type { EngineTokenClaims, TokenService } from '../tokens.ts';
import { responsePolicyProblem } from './response-header-policy.ts';

export interface EngineCallbackDeps {
  ended: EndedRuns;
  progress: RunProgressStore;
  hub: SyncResponseHub;
  tokens: TokenService;
  /** Null when tracing is off. */
  tracer: Tracer | null;
  /** Restricted response headers flows may set anyway (WEBHOOK_RESPONSE_ALLOWED_HEADERS). */
  allowedResponseHeaders: ReadonlySet<string>;
  /** A `flow` step's child run, started or named again (waits/subflow-start.ts): its id. */
  startSubflow(parentRunId: string, report: SubflowStart): Promise<string>;
}

/** A traced run's callback's span, by report: `callback steps`, `callback response`, `callback subflows`. */
const CALLBACK_SPAN_NAMES: Record<EngineReport['type'], string> = {
  steps: 'callback steps',
  'flow-response': 'callback response',
  'subflow-start': 'callback subflows',
};
/** What a kept report answers: nothing, or (subflow-start) the child run's id. */
export type CallbackResult = { runId: string } | undefined;

/** Where a callback came from: its trace parent, a logger, and span attributes of its transport. */
export interface CallbackContext {
  /** The engine span the report was sent from; the callback is traced only when it is set. */
  parent: string | undefined;
  log: { warn(fields: object, msg: string): void };
  attributes: Record<string, string>;
}

/**
 * The engine's callbacks, whatever carried them: the HTTP routes (engine-routes.ts) and the
 * worker's socket (worker-gateway.ts) check and keep them here, the same way. A token for another
 * run, an expired or tampered one, or one whose run has ended is refused before anything is kept.
 * Nothing here writes to Postgres: progress and the response go to Redis (RunProgressStore); the
 * run's record is written once, from the worker's result.
 */
export interface EngineCallbacks {
  /** The token's claims when it is for `runId` and that run has not ended; throws otherwise. */
  authorize(token: string | undefined, runId: string): EngineTokenClaims;
  /**
   * Keeps an authorized run's report; a response the app will not send fails INVALID_RESPONSE.
   * A traced run's callback gets a `callback steps` / `callback response` span; only once its
   * token is good, so a stranger's request adds nothing to anyone's trace.
   */
  handle(claims: EngineTokenClaims, report: EngineReport, context: CallbackContext): Promise<CallbackResult>;
}

export function createEngineCallbacks(deps: EngineCallbackDeps): EngineCallbacks {
  /**
   * Progress is a view, not the record: with Redis down the run goes on (its result is stored
   * from the worker's result) and only the live view misses these steps.
   */
  const recordProgress = async (
    context: CallbackContext,
    ...args: Parameters<RunProgressStore['record']>
  ): Promise<void> => {
    try {
      await deps.progress.record(...args);
    } catch (error) {
      context.log.warn({ err: error, runId: args[0] }, "could not keep a run's progress in Redis");
    }
  };

  const keep = async (
    claims: EngineTokenClaims,
    report: EngineReport,
    context: CallbackContext,
  ): Promise<CallbackResult> => {
    if (report.type === 'steps') {
      await recordProgress(context, claims.runId, report.steps);
      return undefined;
    }
    if (report.type === 'subflow-start') return { runId: await deps.startSubflow(claims.runId, report) };
    // Any piece may call `respond`: what reaches the caller is checked here, whoever built it.
    const problem = responsePolicyProblem(report.response, deps.allowedResponseHeaders);
    if (problem !== null) {
      await recordProgress(context, claims.runId, report.steps);
      throw new FlowboxError('INVALID_RESPONSE', `the response cannot be sent: ${problem}`);
    }
    // Kept before the caller is answered, so a GET right after the answer shows it.
    await recordProgress(context, claims.runId, report.steps, report.response);
    if (claims.syncInstanceId !== null) {
      await deps.hub.publish(claims.syncInstanceId, {
        version: 1,
        type: 'flow-response',
        runId: claims.runId,
        response: report.response,
      });
    }
  };

  return {
    authorize(token, runId) {
      if (token === undefined) throw new FlowboxError('UNAUTHORIZED', 'missing engine token');
      const claims = deps.tokens.verifyEngineToken(token);
      if (claims.runId !== runId) throw new FlowboxError('FORBIDDEN', 'the engine token is for another run');
      if (deps.ended.hasEnded(claims.runId)) {
        throw new FlowboxError('RUN_ALREADY_FINISHED', `run ${claims.runId} has already finished`);
      }
      return claims;
    },
    async handle(claims, report, context) {
      if (deps.tracer === null || context.parent === undefined) return keep(claims, report, context);
      const name = CALLBACK_SPAN_NAMES[report.type];
      const span = deps.tracer.startSpan(name, {
        parent: context.parent,
        kind: 'server',
        attributes: { ...context.attributes, 'flowbox.run_id': claims.runId },
      });
      return traced(span, () => keep(claims, report, context));
    },
  };
}
