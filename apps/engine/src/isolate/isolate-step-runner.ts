import type { EgressFetch } from '@flowbox/egress';
import type { InputValidators } from '@flowbox/pieces-framework/validate';
import {
  type EngineJob,
  type FlowBundle,
  FlowboxError,
  forUsers,
  type PieceStepDefinition,
  type SerializedError,
  SerializedErrorSchema,
  type StepResult,
  serializeError,
} from '@flowbox/protocol';
import { openCodeStepSession } from '../code-steps/code-step-host.ts';
import { openPieceFetch } from '../pieces/piece-fetch.ts';
import { stepAuth } from '../steps/step-auth.ts';
import type { StepRunner } from '../steps/step-runner.ts';
import type { IsolateHost, IsolateStepSessions } from './isolate-host.ts';
import type { RunIsolate, RuntimeCall } from './isolate-run.ts';
import type { SnapshotPiece } from './isolate-snapshots.ts';

/** What the isolate answers for a step (inside/run-runtime.ts). */
interface StepOutcome {
  input: unknown;
  output?: unknown;
  error?: unknown;
}

export interface IsolateStepRunnerDeps {
  bundle: FlowBundle;
  run: RunIsolate;
  host: IsolateHost;
  egressFetch: EgressFetch;
  /** The snapshot's pieces by name, with their actions' input schemas. */
  pieces: ReadonlyMap<string, SnapshotPiece>;
  inputs: InputValidators;
}

/**
 * RUN_ISOLATION=isolate: the step runner (step-runner.ts's counterpart) whose steps execute in
 * the run's isolate: the trigger, piece actions and the templates over earlier outputs inside,
 * code steps in the same isolate through the code-step API. The engine keeps only what it
 * records: the step's input, output or error, its console lines and its time.
 */
export function createIsolateStepRunner(deps: IsolateStepRunnerDeps, job: EngineJob): StepRunner {
  const { run, host } = deps;

  /** One step with its console, timers and requests, closed when the step ends. */
  const inStep = async (
    name: string,
    kind: string,
    rawInput: unknown,
    execute: (sessions: IsolateStepSessions) => Promise<StepOutcome>,
  ): Promise<StepResult> => {
    const startedAt = new Date().toISOString();
    const started = performance.now();
    const sessions = openSessions(deps.egressFetch);
    host.step = sessions;
    let outcome: StepOutcome;
    try {
      outcome = await execute(sessions);
    } catch (error) {
      outcome = { input: rawInput, error: serializeError(sessions.code.failureOf(error), 'STEP_FAILED') };
    } finally {
      host.step = undefined;
      sessions.code.close();
      sessions.piece.close();
    }
    const result: StepResult = {
      name,
      kind,
      status: outcome.error === undefined ? 'SUCCEEDED' : 'FAILED',
      input: outcome.input,
      startedAt,
      durationMs: 0,
    };
    if (outcome.error !== undefined) result.error = { ...forUsers(checkedError(outcome.error)), step: name };
    else if (outcome.output !== undefined) result.output = outcome.output;
    const logs = sessions.code.lines();
    if (logs.length > 0) result.logs = logs;
    result.durationMs = performance.now() - started;
    return result;
  };

  /** The input `run` gets, as host-step-runner.ts checks it in the other modes. */
  const validated = (pieceName: string, actionName: string, input: unknown, stepName: string): unknown => {
    const piece = deps.pieces.get(pieceName);
    if (piece === undefined) throw new FlowboxError('STEP_FAILED', `unknown piece '${pieceName}'`);
    const inputSchema = piece.inputs[actionName];
    if (inputSchema === undefined) {
      throw new FlowboxError('STEP_FAILED', `piece '${pieceName}' has no action '${actionName}'`);
    }
    return deps.inputs.validate(piece.key, { name: actionName, inputSchema }, input, stepName);
  };

  /** The step's `ctx.auth`, as host-step-runner.ts gives it in the other modes. */
  const authOf = (step: PieceStepDefinition): unknown => {
    const piece = deps.pieces.get(step.piece);
    const check = { validators: deps.inputs, pieceKey: piece?.key ?? step.piece };
    return stepAuth(step, piece?.auths[step.action], job.connections, check);
  };

  const call = async (name: RuntimeCall, payload: unknown): Promise<StepOutcome> =>
    JSON.parse(await run.call(name, JSON.stringify(payload))) as StepOutcome;

  return {
    runTrigger() {
      const { trigger } = deps.bundle.definition;
      return inStep(trigger.name, `${trigger.piece}/${trigger.trigger}`, trigger.input, () =>
        call('runTrigger', { ...trigger, name: trigger.name, payload: job.trigger }),
      );
    },
    runStep(step) {
      if (step.type === 'piece') {
        return inStep(step.name, `${step.piece}/${step.action}`, step.input, async () => {
          // Resolved inside (the outputs live there), validated here, run inside: no parser in the run's realm.
          const resolved = await call('resolveInput', { name: step.name, input: step.input });
          if (resolved.error !== undefined) return resolved;
          let input: unknown;
          let auth: unknown;
          try {
            input = validated(step.piece, step.action, resolved.input, step.name);
            auth = authOf(step);
          } catch (error) {
            return { input: resolved.input, error: serializeError(error, 'STEP_FAILED') };
          }
          const outcome = await call('runAction', { ...step, input, auth });
          return { ...outcome, input: resolved.input };
        });
      }
      return inStep(step.name, 'code', step.input, async (sessions) => {
        const resolved = await call('resolveInput', { name: step.name, input: step.input });
        if (resolved.error !== undefined) return resolved;
        // The bundle loader checked that every code step has its compiled source.
        const source = deps.bundle.code[step.name];
        if (source === undefined) throw new FlowboxError('INTERNAL', `no compiled code for ${step.name}`);
        let output: unknown;
        try {
          output = await run.runCode({
            source,
            inputs: resolved.input,
            timeoutMs: job.limits.codeStepTimeoutMs,
            memoryMb: job.limits.codeStepMemoryMb,
            host: sessions.code.host,
          });
        } catch (error) {
          return {
            input: resolved.input,
            error: serializeError(sessions.code.failureOf(error), 'STEP_FAILED'),
          };
        }
        await run.remember(step.name, output === undefined ? undefined : JSON.stringify(output));
        return { input: resolved.input, output };
      });
    },
  };
}

function openSessions(egressFetch: EgressFetch): IsolateStepSessions {
  return { code: openCodeStepSession(egressFetch), piece: openPieceFetch(egressFetch) };
}

/** The isolate's error as the protocol has it; anything else it says is a step failure. */
function checkedError(error: unknown): SerializedError {
  const parsed = SerializedErrorSchema.safeParse(error);
  if (parsed.success) return parsed.data;
  const message = (error as { message?: unknown } | null)?.message;
  return {
    name: 'Error',
    code: 'STEP_FAILED',
    message: typeof message === 'string' ? message : String(error),
  };
}
