import { FlowboxError } from '@flowbox/protocol';
import type { Context, Isolate, Reference } from 'isolated-vm';
import type { CodeRunRequest } from '../code-steps/code-runner.ts';
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

/** A fresh isolate from a snapshot and its context, which no run has used yet. */
export interface BlankIsolate {
  isolate: Isolate;
  context: Context;
}

/** Starts an isolate from the snapshot, with the run's heap limit (CODE_STEP_MEMORY_MB). */
export async function createBlankIsolate(
  ivm: IsolatedVm,
  snapshot: IsolateSnapshot,
  memoryMb: number,
  onCatastrophicError: (message: string) => void,
): Promise<BlankIsolate> {
  const isolate = new ivm.Isolate({ snapshot: snapshot.blob, memoryLimit: memoryMb, onCatastrophicError });
  try {
    return { isolate, context: await isolate.createContext() };
  } catch (error) {
    isolate.dispose();
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
 * Starts a run in its blank isolate (from the snapshot of its pieces) and hands it the host's three
 * references. A run past its CPU time is stopped by disposing of the isolate (V8 cannot
 * interrupt a busy isolate otherwise); past its memory limit isolated-vm disposes of it. Either
 * way the step running fails with its code, the run ends, and the engine is untouched.
 */
export async function openRunIsolate(options: RunIsolateOptions): Promise<RunIsolate> {
  const { ivm, host, memoryMb, cpuLimitMs } = options;
  const { isolate, context } = options.blank;
  let stopped: 'cpu' | 'deadline' | undefined;
  const references: Reference[] = [];
  const watch = setInterval(() => {
    if (!isolate.isDisposed && Number(isolate.cpuTime) / 1e6 > cpuLimitMs) {
      stopped = 'cpu';
      isolate.dispose();
    }
  }, CPU_CHECK_MS);
  const close = (): void => {
    clearInterval(watch);
    for (const reference of references) reference.release();
    references.length = 0;
    if (!isolate.isDisposed) isolate.dispose();
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

  try {
    for (const fn of [host.sync, host.async, host.notify]) references.push(new ivm.Reference(fn));
    await context.evalClosure(
      '__flowbox.start({ sync: $0, async: $1, notify: $2 }, $3, $4);',
      [
        ...references,
        options.runId,
        options.connections === undefined ? undefined : JSON.stringify(options.connections),
      ],
      { timeout: cpuLimitMs },
    );
  } catch (error) {
    close();
    throw limitError(error);
  }
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
        const answer = running.evalClosure(`return __flowbox.${name}($0);`, [json], {
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
        await running.evalClosure('__flowbox.remember($0, $1);', [stepName, outputJson], {
          timeout: cpuLimitMs,
        });
      } catch (error) {
        throw limitError(error);
      }
    },
    async runCode(request) {
      const outcome = await evalCodeStep(ivm, isolate, running, request);
      if ('output' in outcome) return outcome.output;
      // The run's CPU limit stopped it rather than the step's own: say which.
      throw stopped === 'cpu' ? limitError(outcome.error) : outcome.error;
    },
    cpuMs: () => (isolate.isDisposed ? 0 : Number(isolate.cpuTime) / 1e6),
    close,
  };
}
