import { FlowboxError } from '@flowbox/protocol';
import type { Context, Isolate } from 'isolated-vm';
import type { CodeRunRequest } from '../code-steps/code-runner.ts';
import { UNBOUNDED_MEMORY } from '../code-steps/code-step-script.ts';
import { evalCodeStep, IVM_TIMEOUT_MESSAGE, isAllocationRefused } from '../code-steps/eval-code-step.ts';
import type { IsolatedVm } from '../code-steps/isolated-vm-runner.ts';
import type { IsolateHost } from './isolate-host.ts';
import type { IsolateSnapshot } from './isolate-snapshots.ts';

/** The run runtime's entry points (inside/run-runtime.ts) the engine calls; JSON text in and out. */
export type RuntimeCall = 'runTrigger' | 'runAction' | 'resolveInput';

/** One run's own isolate: every step of the run executes in it, and it is disposed with the run. */
export interface RunIsolate {
  call(name: RuntimeCall, json: string): Promise<string>;
  /** Puts a code step's output (JSON text) in the scope templates read. */
  remember(stepName: string, outputJson: string | undefined): Promise<void>;
  runCode(request: CodeRunRequest): Promise<unknown>;
  /** CPU time the isolate has used so far, in milliseconds. */
  cpuMs(): number;
  close(): void;
}

/**
 * A fresh isolate from a snapshot and its context, connected to the host through references
 * that call the run which takes it (`take`). No run has used it yet.
 */
export interface BlankIsolate {
  isolate: Isolate;
  context: Context;
  /** The run's host, which the isolate's references call from now on (once). */
  take(host: IsolateHost): void;
  /** Releases the references and disposes of the isolate. */
  dispose(): void;
}

/** Bounds the framework's own `connect` in a blank isolate (no run's limit applies yet). */
const CONNECT_TIMEOUT_MS = 1_000;

/**
 * Starts an isolate from the snapshot, with the run's heap limit (CODE_STEP_MEMORY_MB), and
 * connects its host references, so a run that takes it makes no call of its own to start (the
 * spare made between jobs, run-isolation.ts). Until a run takes it, the references answer that
 * no run has it; nothing but the framework's `connect` has run in it.
 */
export async function createBlankIsolate(
  ivm: IsolatedVm,
  snapshot: IsolateSnapshot,
  memoryMb: number,
  onCatastrophicError: (message: string) => void,
): Promise<BlankIsolate> {
  const isolate = new ivm.Isolate({ snapshot: snapshot.blob, memoryLimit: memoryMb, onCatastrophicError });
  const slot: { host: IsolateHost | undefined } = { host: undefined };
  const references = [
    new ivm.Reference((name: unknown, args: unknown) => {
      if (slot.host === undefined) throw new Error('no run has this isolate');
      return slot.host.sync(name, args);
    }),
    new ivm.Reference(async (name: unknown, args: unknown) =>
      slot.host === undefined
        ? JSON.stringify({ error: { code: 'INTERNAL', message: 'no run has this isolate' } })
        : slot.host.async(name, args),
    ),
    new ivm.Reference((name: unknown, args: unknown) => slot.host?.notify(name, args)),
  ];
  const dispose = (): void => {
    for (const reference of references) reference.release();
    references.length = 0;
    if (!isolate.isDisposed) isolate.dispose();
  };
  try {
    const context = await isolate.createContext();
    // V8 installs WebAssembly again in every context it makes from a snapshot (inside/entry.ts
    // deleted it in the snapshot's own): it goes before any piece or step code runs here.
    await context.evalClosure(
      `${UNBOUNDED_MEMORY} __flowbox.connect({ sync: $0, async: $1, notify: $2 });`,
      references,
      { timeout: CONNECT_TIMEOUT_MS },
    );
    return {
      isolate,
      context,
      take(host) {
        if (slot.host !== undefined) throw new Error('a run has this isolate already');
        slot.host = host;
      },
      dispose,
    };
  } catch (error) {
    dispose();
    throw error;
  }
}

export interface RunIsolateOptions {
  ivm: IsolatedVm;
  /** The run's isolate, blank; the run disposes of it. */
  blank: BlankIsolate;
  runId: string;
  /** The run's connections, which its templates read as `{{connections.x}}`. */
  connections?: Readonly<Record<string, unknown>> | undefined;
  /** The isolate's heap limit for the whole run (CODE_STEP_MEMORY_MB). */
  memoryMb: number;
  /** CPU time the whole run may use in its isolate (CODE_STEP_TIMEOUT_MS). */
  cpuLimitMs: number;
  /**
   * When (performance.now()) the run's isolate is stopped if a step still waits: before the
   * worker's flow timeout would kill the engine, leaving time to report.
   */
  deadline: number;
  host: IsolateHost;
}

/** How often the run's CPU time is checked: a run past its limit ends within this (and a second). */
const CPU_CHECK_MS = 50;

/**
 * Hands a blank isolate (from the snapshot of its pieces) to a run: its references call the
 * run's host from now on, and its first call tells the isolate which run it is (no call of its
 * own). A run past its CPU time is stopped by disposing of the isolate (V8 cannot
 * interrupt a busy isolate otherwise); past its memory limit isolated-vm disposes of it. Either
 * way the step running fails with its code, the run ends, and the engine is untouched.
 */
export function openRunIsolate(options: RunIsolateOptions): RunIsolate {
  const { ivm, host, memoryMb, cpuLimitMs } = options;
  const { isolate, context } = options.blank;
  options.blank.take(host);
  let stopped: 'cpu' | 'deadline' | undefined;
  const watch = setInterval(() => {
    if (!isolate.isDisposed && Number(isolate.cpuTime) / 1e6 > cpuLimitMs) {
      stopped = 'cpu';
      isolate.dispose();
    }
  }, CPU_CHECK_MS);
  const close = (): void => {
    clearInterval(watch);
    options.blank.dispose();
  };
  /** `begin`'s arguments, until the first call into the isolate has passed them. */
  let beginArgs: [string, string | undefined] | undefined = [
    options.runId,
    options.connections === undefined ? undefined : JSON.stringify(options.connections),
  ];
  /** What a call evaluates: the run's `begin` first, if no call has made it yet. */
  const withBegin = (body: string, args: unknown[]): [string, unknown[]] => {
    const pending = beginArgs;
    if (pending === undefined) return [body, args];
    beginArgs = undefined;
    const at = args.length;
    return [`__flowbox.begin($${at}, $${at + 1}); ${body}`, [...args, ...pending]];
  };

  const limitError = (error: unknown): unknown => {
    const message = error instanceof Error ? error.message : '';
    if (stopped === 'deadline') {
      return new FlowboxError(
        'FLOW_TIMEOUT',
        'the run was still waiting when its time ran out (FLOW_TIMEOUT_SECONDS)',
      );
    }
    if (stopped === 'cpu' || message === IVM_TIMEOUT_MESSAGE) {
      return new FlowboxError(
        'CODE_STEP_TIMEOUT',
        `the run used more than its ${cpuLimitMs} ms of CPU time (CODE_STEP_TIMEOUT_MS bounds a whole run with RUN_ISOLATION=isolate)`,
      );
    }
    if (isolate.isDisposed || isAllocationRefused(error)) {
      return new FlowboxError(
        'CODE_STEP_MEMORY_LIMIT',
        `the run went past its ${memoryMb} MB memory limit (CODE_STEP_MEMORY_MB bounds a whole run with RUN_ISOLATION=isolate)`,
        { cause: error },
      );
    }
    return error;
  };
  const running = context;

  return {
    async call(name, json) {
      // A step that waits on what never settles (a replaced Promise.prototype.then, say) ends
      // here, rather than at the worker's timeout, which would take the engine with it.
      let guard: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        guard = setTimeout(
          () => {
            stopped ??= 'deadline';
            if (!isolate.isDisposed) isolate.dispose();
            reject(new Error('deadline'));
          },
          Math.max(0, options.deadline - performance.now()),
        );
      });
      try {
        const [body, args] = withBegin(`return __flowbox.${name}($0);`, [json]);
        const answer = running.evalClosure(body, args, {
          timeout: cpuLimitMs,
          result: { promise: true, copy: true },
        });
        answer.catch(() => {});
        return String(await Promise.race([answer, late]));
      } catch (error) {
        throw limitError(error);
      } finally {
        clearTimeout(guard);
      }
    },
    async remember(stepName, outputJson) {
      try {
        const [body, args] = withBegin('__flowbox.remember($0, $1);', [stepName, outputJson]);
        await running.evalClosure(body, args, { timeout: cpuLimitMs });
      } catch (error) {
        throw limitError(error);
      }
    },
    async runCode(request) {
      // The trigger's call makes `begin` in every flow; a code step never comes first.
      if (beginArgs !== undefined) {
        const [body, args] = withBegin('', []);
        try {
          await running.evalClosure(body, args, { timeout: cpuLimitMs });
        } catch (error) {
          throw limitError(error);
        }
      }
      const outcome = await evalCodeStep(ivm, isolate, running, request);
      if ('output' in outcome) return outcome.output;
      // The run's CPU limit stopped it rather than the step's own: say which.
      throw stopped === 'cpu' ? limitError(outcome.error) : outcome.error;
    },
    cpuMs: () => (isolate.isDisposed ? 0 : Number(isolate.cpuTime) / 1e6),
    close,
  };
}
