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
  serializeError,
} from '@flowbox/protocol';
import { openCodeStepSession } from '../code-steps/code-step-host.ts';
import type { LeafExecutor, LeafOutcome } from '../flows/interpreter/leaf-executor.ts';
import { openPieceFetch } from '../pieces/piece-fetch.ts';
import { stepAuth } from '../steps/step-auth.ts';
import type { IsolateHost, IsolateStepSessions } from './isolate-host.ts';
import type { RunIsolate } from './isolate-run.ts';
import type { SnapshotPiece } from './isolate-snapshots.ts';

/** What the isolate answers for a leaf (inside/run-runtime.ts). */
interface IsolateAnswer {
  output?: unknown;
  error?: unknown;
}

export interface IsolateLeafExecutorDeps {
  bundle: FlowBundle;
  run: RunIsolate;
  host: IsolateHost;
  egressFetch: EgressFetch;
  /** The snapshot's pieces by name, with their actions' input schemas. */
  pieces: ReadonlyMap<string, SnapshotPiece>;
  inputs: InputValidators;
}

/**
 * RUN_ISOLATION=isolate: leaves run in the run's isolate, one call each: the trigger and piece
 * actions through the run runtime, code steps in the same context through the code-step API.
 * Their inputs arrive resolved (the interpreter's, in the engine) and, for actions, validated
 * here. Each leaf has its own console, timers and requests (a token the isolate passes back), so
 * a loop's iterations may run at once. A leaf past its `timeoutMs` has its requests aborted;
 * the run's isolate serves no later run (the leaf may still be busy in it).
 */
export function createIsolateLeafExecutor(deps: IsolateLeafExecutorDeps, job: EngineJob): LeafExecutor {
  const { run, host } = deps;

  const inStep = async (
    signal: AbortSignal | undefined,
    execute: (sessions: IsolateStepSessions, token: number) => Promise<IsolateAnswer>,
  ): Promise<LeafOutcome> => {
    const sessions: IsolateStepSessions = {
      code: openCodeStepSession(deps.egressFetch),
      piece: openPieceFetch(deps.egressFetch),
    };
    const token = host.openStep(sessions);
    const stop = () => {
      sessions.code.close();
      sessions.piece.close();
      run.spoil();
    };
    signal?.addEventListener('abort', stop, { once: true });
    let answer: IsolateAnswer;
    try {
      answer = await execute(sessions, token);
    } catch (error) {
      answer = { error: serializeError(sessions.code.failureOf(error), 'STEP_FAILED') };
    } finally {
      signal?.removeEventListener('abort', stop);
      host.closeStep(token);
      sessions.code.close();
      sessions.piece.close();
    }
    const outcome: LeafOutcome =
      answer.error === undefined
        ? { output: answer.output }
        : { error: forUsers(checkedError(answer.error)) };
    const logs = sessions.code.lines();
    if (logs.length > 0) outcome.logs = logs;
    return outcome;
  };

  /** The input an action gets, as host-leaf-executor.ts checks it in the other modes. */
  const validated = (pieceName: string, actionName: string, input: unknown, stepName: string): unknown => {
    const piece = deps.pieces.get(pieceName);
    if (piece === undefined) throw new FlowboxError('STEP_FAILED', `unknown piece '${pieceName}'`);
    const inputSchema = piece.inputs[actionName];
    if (inputSchema === undefined) {
      throw new FlowboxError('STEP_FAILED', `piece '${pieceName}' has no action '${actionName}'`);
    }
    return deps.inputs.validate(piece.key, { name: actionName, inputSchema }, input, stepName);
  };

  /** The step's `ctx.auth`, as host-leaf-executor.ts gives it in the other modes. */
  const authOf = (step: PieceStepDefinition): unknown => {
    const piece = deps.pieces.get(step.piece);
    const check = { validators: deps.inputs, pieceKey: piece?.key ?? step.piece };
    return stepAuth(step, piece?.auths[step.action], job.connections, check);
  };

  const call = async (name: 'runTrigger' | 'runAction', payload: unknown): Promise<IsolateAnswer> =>
    JSON.parse(await run.call(name, JSON.stringify(payload))) as IsolateAnswer;

  return {
    trigger(input) {
      const { trigger } = deps.bundle.definition;
      return inStep(undefined, (_sessions, token) =>
        call('runTrigger', {
          name: trigger.name,
          piece: trigger.piece,
          trigger: trigger.trigger,
          input,
          payload: job.trigger,
          token,
        }),
      );
    },
    leaf(step, input, leafRun) {
      if (step.type === 'piece') {
        return inStep(leafRun.signal, (_sessions, token) =>
          call('runAction', {
            name: step.name,
            piece: step.piece,
            action: step.action,
            input: validated(step.piece, step.action, input, step.name),
            auth: authOf(step),
            token,
          }),
        );
      }
      return inStep(leafRun.signal, async (sessions) => {
        // The bundle loader checked that every code step has its compiled source.
        const source = deps.bundle.code[step.name];
        if (source === undefined) throw new FlowboxError('INTERNAL', `no compiled code for ${step.name}`);
        const output = await run.runCode({
          source,
          inputs: input,
          timeoutMs: leafRun.codeTimeoutMs,
          memoryMb: job.limits.codeStepMemoryMb,
          host: sessions.code.host,
        });
        return { output };
      });
    },
  };
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
