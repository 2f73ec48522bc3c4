import type { EgressFetch } from '@flowbox/egress';
import type { ActionContext } from '@flowbox/pieces-framework';
import type { InputValidators } from '@flowbox/pieces-framework/validate';
import {
  type EngineJob,
  type FlowBundle,
  FlowboxError,
  type FlowResponse,
  forUsers,
  type StepResult,
  serializeError,
} from '@flowbox/protocol';
import type { CodeRunner } from '../code-steps/code-runner.ts';
import { openCodeStepSession } from '../code-steps/code-step-host.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import { openPieceFetch } from '../pieces/piece-fetch.ts';
import type { RunPieces } from '../pieces/run-pieces.ts';
import { stepAuth } from '../steps/step-auth.ts';
import { openPieceLog } from '../steps/step-lines.ts';
import type { StepRunner } from '../steps/step-runner.ts';
import { resolveTemplates, type TemplateScope } from '../steps/template.ts';

/** What one run's steps run with: its bundle, its pieces and the code runner of its mode. */
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

export function createHostStepRunner(
  deps: StepRunnerDeps,
  job: EngineJob,
  respond: (response: FlowResponse) => Promise<void>,
): StepRunner {
  const stepLog =
    (stepName: string): EngineLog =>
    (level, msg, data) =>
      deps.log(level, msg, { ...data, runId: job.runId, step: stepName });

  return {
    async runTrigger() {
      const { trigger } = deps.bundle.definition;
      const pieceLog = openPieceLog(stepLog(trigger.name));
      const result = await record(
        trigger.name,
        `${trigger.piece}/${trigger.trigger}`,
        trigger.input,
        {},
        async () => {
          const piece = deps.pieces.trigger(trigger.piece, trigger.trigger);
          return piece.execute(job.trigger, {
            runId: job.runId,
            stepName: trigger.name,
            log: pieceLog.log,
          });
        },
      );
      return pieceLog.keep(result);
    },
    async runStep(step, scope) {
      if (step.type === 'code') {
        const session = openCodeStepSession(deps.egressFetch);
        let result: StepResult;
        try {
          result = await record(step.name, 'code', step.input, scope, async (inputs) => {
            // The bundle loader checked that every code step has its compiled source.
            const source = deps.bundle.code[step.name];
            if (source === undefined) throw new FlowboxError('INTERNAL', `no compiled code for ${step.name}`);
            const request = {
              source,
              inputs,
              timeoutMs: job.limits.codeStepTimeoutMs,
              memoryMb: job.limits.codeStepMemoryMb,
              host: session.host,
            };
            return deps.codeRunner.run(request).catch((error: unknown) => {
              throw session.failureOf(error);
            });
          });
        } finally {
          session.close();
        }
        const logs = session.lines();
        return logs.length > 0 ? { ...result, logs } : result;
      }
      const http = openPieceFetch(deps.egressFetch);
      const pieceLog = openPieceLog(stepLog(step.name));
      try {
        const result = await record(step.name, `${step.piece}/${step.action}`, step.input, scope, (input) => {
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
        return pieceLog.keep(result);
      } finally {
        // A request the piece left running does not outlive its step.
        http.close();
      }
    },
  };
}

async function record(
  name: string,
  kind: string,
  rawInput: unknown,
  scope: TemplateScope,
  run: (input: unknown) => Promise<unknown>,
): Promise<StepResult> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  // Until the templates resolve, the report shows the input as written.
  let input = rawInput;
  try {
    input = resolveTemplates(rawInput, scope, name);
    const output = await run(input);
    const result: StepResult = { name, kind, status: 'SUCCEEDED', input, startedAt, durationMs: 0 };
    if (output !== undefined) result.output = output;
    result.durationMs = performance.now() - started;
    return result;
  } catch (error) {
    // Errors from piece code without a flowbox code are the step's own failure. Users see the
    // stack's flow frames only: the rest is the engine's, in the worker's cache.
    const serialized = { ...forUsers(serializeError(error, 'STEP_FAILED')), step: name };
    return {
      name,
      kind,
      status: 'FAILED',
      input,
      error: serialized,
      startedAt,
      durationMs: performance.now() - started,
    };
  }
}
