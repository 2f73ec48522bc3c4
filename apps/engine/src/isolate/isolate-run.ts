import { FlowboxError } from '@flowbox/protocol';
import type { Context, Isolate } from 'isolated-vm';
import type { CodeRunRequest } from '../code-steps/code-runner.ts';
import { UNBOUNDED_MEMORY } from '../code-steps/code-step-script.ts';
import { evalCodeStep, IVM_TIMEOUT_MESSAGE, isAllocationRefused } from '../code-steps/eval-code-step.ts';
import type { IsolatedVm } from '../code-steps/isolated-vm-runner.ts';
import type { IsolateHost } from './isolate-host.ts';
import type { IsolateSnapshot } from './isolate-snapshots.ts';

/** The run runtime's entry points (inside/run-runtime.ts) the engine calls; JSON text in and out. */
export type RuntimeCall = 'runTrigger' | 'runAction';

/** One run's own context in its isolate: every step of the run executes in it, and it ends with the run. */
export interface RunIsolate {
  call(name: RuntimeCall, json: string): Promise<string>;
  runCode(request: CodeRunRequest): Promise<unknown>;
  /** CPU time the run has used in its isolate so far, in milliseconds. */
  cpuMs(): number;
  /**
   * False once a limit stopped the run (CPU time, memory, its deadline, a code step's timeout):
   * the isolate is disposed or may be busy, and no later run may take a context of it.
   */
  reusable(): boolean;
  /** A leaf was abandoned past its timeoutMs and may still be busy: no later run takes the isolate. */
  spoil(): void;
  /** Releases the run's context and its references; the isolate stays for the next run. */
  close(): void;
}

/**
 * A fresh context in an isolate made from a snapshot (V8 deserializes the snapshot's framework
 * and pieces into every context it makes, so each has its own module state), connected to the
 * host through references that call the run which takes it (`take`). No run has used it yet.
 */
export interface BlankContext {
  isolate: Isolate;
  context: Context;
  /** The run's host, which the context's references call from now on (once). */
  take(host: IsolateHost): void;
  /** Releases the references and the context; the references answer no run from then on. */
  release(): void;
}

/** Bounds the framework's own `connect` in a blank context (no run's limit applies yet). */
const CONNECT_TIMEOUT_MS = 1_000;

/** An isolate from the snapshot, with the runs' heap limit (CODE_STEP_MEMORY_MB). */
export function createSnapshotIsolate(
  ivm: IsolatedVm,
  snapshot: IsolateSnapshot,
  memoryMb: number,
  onCatastrophicError: (message: string) => void,
): Isolate {
  return new ivm.Isolate({ snapshot: snapshot.blob, memoryLimit: memoryMb, onCatastrophicError });
}

/**
 * Makes a context in `isolate` and connects its host references, so a run that takes it makes
 * no call of its own to start (the spare made between jobs, run-isolation.ts). Until a run
 * takes it, the references answer that no run has it; after `release` they answer the same,
 * so nothing a run left pending in its context reaches a later run's host. Nothing but the
 * framework's `connect` has run in it.
 */
export async function createBlankContext(ivm: IsolatedVm, isolate: Isolate): Promise<BlankContext> {
  const slot: { host: IsolateHost | undefined; taken: boolean } = { host: undefined, taken: false };
  const references = [
    new ivm.Reference((name: unknown, args: unknown) => {
      if (slot.host === undefined) throw new Error('no run has this context');
      return slot.host.sync(name, args);
    }),
    new ivm.Reference(async (name: unknown, args: unknown) =>
      slot.host === undefined
        ? JSON.stringify({ error: { code: 'INTERNAL', message: 'no run has this context' } })
        : slot.host.async(name, args),
    ),
    new ivm.Reference((name: unknown, args: unknown) => slot.host?.notify(name, args)),
  ];
  let context: Context | undefined;
  const release = (): void => {
    slot.host = undefined;
    for (const reference of references) reference.release();
    references.length = 0;
    // Without the release every context stays in the isolate until its memory limit kills it.
    if (!isolate.isDisposed) context?.release();
  };
  try {
    context = await isolate.createContext();
    // V8 installs WebAssembly again in every context it makes from a snapshot (inside/entry.ts
    // deleted it in the snapshot's own): it goes before any piece or step code runs here.
    await context.evalClosure(
      `${UNBOUNDED_MEMORY} __flowbox.connect({ sync: $0, async: $1, notify: $2 });`,
      references,
      { timeout: CONNECT_TIMEOUT_MS },
    );
    const made = context;
    return {
      isolate,
      context: made,
      take(host) {
        if (slot.taken) throw new Error('a run has this context already');
        slot.taken = true;
        slot.host = host;
      },
      release,
    };
  } catch (error) {
    release();
    throw error;
  }
}

export interface RunIsolateOptions {
  ivm: IsolatedVm;
  /** The run's context, blank; the run releases it. */
  blank: BlankContext;
  runId: string;
  /** The isolate's heap limit (CODE_STEP_MEMORY_MB), for the run's error message. */
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
 * Hands a blank context (in an isolate from the snapshot of its pieces) to a run: its references
 * call the run's host from now on, and its first call tells the context which run it is (no call
 * of its own). The run's CPU time is what its isolate used since the run took the context. A run
 * past its CPU time is stopped by disposing of the isolate (V8 cannot interrupt a busy isolate
 * otherwise); past its memory limit isolated-vm disposes of it. Either way the step running
 * fails with its code, the run ends, no later run uses that isolate, and the engine is untouched.
 */
export function openRunIsolate(options: RunIsolateOptions): RunIsolate {
  const { ivm, host, memoryMb, cpuLimitMs } = options;
  const { isolate, context } = options.blank;
  options.blank.take(host);
  const cpuAtStart = Number(isolate.cpuTime);
  let cpuSeen = 0;
  const cpuMs = (): number => {
    if (!isolate.isDisposed) cpuSeen = (Number(isolate.cpuTime) - cpuAtStart) / 1e6;
    return cpuSeen;
  };
  let stopped: 'cpu' | 'deadline' | undefined;
  /**
   * A limit met without disposing of the isolate: a code step's timeout may leave it busy
   * (eval-code-step.ts), a refused allocation leaves its heap at the limit.
   */
  let spoiled = false;
  const watch = setInterval(() => {
    if (!isolate.isDisposed && cpuMs() > cpuLimitMs) {
      stopped = 'cpu';
      isolate.dispose();
    }
  }, CPU_CHECK_MS);
  const close = (): void => {
    clearInterval(watch);
    options.blank.release();
  };
  /** `begin`'s arguments, until the first call into the isolate has passed them. */
  let beginArgs: [string] | undefined = [options.runId];
  /** What a call evaluates: the run's `begin` first, if no call has made it yet. */
  const withBegin = (body: string, args: unknown[]): [string, unknown[]] => {
    const pending = beginArgs;
    if (pending === undefined) return [body, args];
    beginArgs = undefined;
    const at = args.length;
    return [`__flowbox.begin($${at}); ${body}`, [...args, ...pending]];
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
      // Whichever bound stopped it (the watch, or the call's own timeout), a run past its CPU
      // time leaves the isolate to no later run.
      spoiled = true;
      return new FlowboxError(
        'CODE_STEP_TIMEOUT',
        `the run used more than its ${cpuLimitMs} ms of CPU time (CODE_STEP_TIMEOUT_MS bounds a whole run with RUN_ISOLATION=isolate)`,
      );
    }
    if (isolate.isDisposed || isAllocationRefused(error)) {
      spoiled = true;
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
      // A timeout may leave the isolate busy; a refused allocation leaves its heap near the limit.
      const memory = outcome.error instanceof FlowboxError && outcome.error.code === 'CODE_STEP_MEMORY_LIMIT';
      if (outcome.mustDispose || memory) spoiled = true;
      // The run's CPU limit stopped it rather than the step's own: say which.
      throw stopped === 'cpu' ? limitError(outcome.error) : outcome.error;
    },
    cpuMs,
    reusable: () => !spoiled && stopped === undefined && !isolate.isDisposed,
    spoil() {
      spoiled = true;
    },
    close,
  };
}
