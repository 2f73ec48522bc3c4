import type { EgressFetch } from '@flowbox/egress';
import type { ActionContext } from '@flowbox/pieces-framework';
import type { InputValidators } from '@flowbox/pieces-framework/validate';
import {
  type EngineJob,
  type FlowBundle,
  FlowboxError,
  type FlowResponse,
  forUsers,
  serializeError,
} from '@flowbox/protocol';
import type { CodeRunner } from '../code-steps/code-runner.ts';
import { openCodeStepSession } from '../code-steps/code-step-host.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import { openPieceFetch } from '../pieces/piece-fetch.ts';
import type { RunPieces } from '../pieces/run-pieces.ts';
import { stepAuth } from '../steps/step-auth.ts';
import { openPieceLog } from '../steps/step-lines.ts';
import type { LeafExecutor, LeafOutcome } from './interpreter/leaf-executor.ts';

/** What one run's leaves run with: its bundle, its pieces and the code runner of its mode. */
export interface StepRunnerDeps {
  bundle: FlowBundle;
  pieces: RunPieces;
  codeRunner: CodeRunner;
  /** Code steps' `fetch` and pieces' `ctx.fetch`, under the job's egress policy. */
  egressFetch: EgressFetch;
  /** Pieces' inputs, checked here before `execute` (the engine's one validator, all modes). */
  inputs: InputValidators;
  log: EngineLog;
}

/**
 * RUN_ISOLATION=shared and process (and SANDBOXED, whose engine is the sandbox): leaves run in
 * the engine's realm, pieces as loaded modules, code steps in the mode's code runner (those of
 * one run in one context of it, one after another, as in a run's isolate). A step's
 * `timeoutMs` aborts its requests and ends its code step's session; its code runner has the
 * same time.
 */
export function createHostLeafExecutor(
  deps: StepRunnerDeps,
  job: EngineJob,
  respond: (response: FlowResponse) => Promise<void>,
): LeafExecutor {
  const stepLog =
    (stepName: string): EngineLog =>
    (level, msg, data) =>
      deps.log(level, msg, { ...data, runId: job.runId, step: stepName });
  /** The run's code steps share one context in the runner (isolated-vm), as in a run's isolate. */
  const codeRun = {};

  return {
    close() {
      deps.codeRunner.endRun?.(codeRun);
    },
    async trigger() {
      const { trigger } = deps.bundle.definition;
      const pieceLog = openPieceLog(stepLog(trigger.name));
      const outcome = await settle(async () => {
        const piece = deps.pieces.trigger(trigger.piece, trigger.trigger);
        return piece.execute(job.trigger, {
          runId: job.runId,
          stepName: trigger.name,
          log: pieceLog.log,
        });
      });
      return pieceLog.keep(outcome);
    },
    async leaf(step, input, run) {
      if (step.type === 'code') {
        const session = openCodeStepSession(deps.egressFetch);
        const stop = () => session.close();
        run.signal?.addEventListener('abort', stop, { once: true });
        try {
          const outcome = await settle(() => {
            // The bundle loader checked that every code step has its compiled source.
            const source = deps.bundle.code[step.name];
            if (source === undefined) throw new FlowboxError('INTERNAL', `no compiled code for ${step.name}`);
            const request = {
              source,
              inputs: input,
              timeoutMs: run.codeTimeoutMs,
              memoryMb: job.limits.codeStepMemoryMb,
              host: session.host,
              run: codeRun,
            };
            return deps.codeRunner.run(request).catch((error: unknown) => {
              throw session.failureOf(error);
            });
          });
          const logs = session.lines();
          return logs.length > 0 ? { ...outcome, logs } : outcome;
        } finally {
          run.signal?.removeEventListener('abort', stop);
          session.close();
        }
      }
      const http = openPieceFetch(deps.egressFetch);
      const pieceLog = openPieceLog(stepLog(step.name));
      const stop = () => http.close();
      run.signal?.addEventListener('abort', stop, { once: true });
      try {
        const outcome = await settle(() => {
          const action = deps.pieces.action(step.piece, step.action);
          const checked = deps.inputs.validate(deps.pieces.key(step.piece), action, input, step.name);
          const ctx: ActionContext = {
            runId: job.runId,
            stepName: step.name,
            respond,
            fetch: http.fetch,
            log: pieceLog.log,
            auth: stepAuth(step, action.auth, job.connections, {
              validators: deps.inputs,
              pieceKey: deps.pieces.key(step.piece),
            }),
          };
          return action.execute(checked, ctx);
        });
        return pieceLog.keep(outcome);
      } finally {
        run.signal?.removeEventListener('abort', stop);
        // A request the piece left running does not outlive its step.
        http.close();
      }
    },
  };
}

/**
 * The leaf's output, or its error as users see it: errors from piece code without a flowbox
 * code are the step's own failure, and only the stack's flow frames are shown (the rest is the
 * engine's, in the worker's cache).
 */
async function settle(run: () => unknown): Promise<LeafOutcome> {
  try {
    return { output: await run() };
  } catch (error) {
    return { error: forUsers(serializeError(error, 'STEP_FAILED')) };
  }
}
