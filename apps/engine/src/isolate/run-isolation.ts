import type { EgressFetch } from '@flowbox/egress';
import { createInputValidators, type InputValidators } from '@flowbox/pieces-framework/validate';
import type { EngineJob, FlowBundle, FlowResponse } from '@flowbox/protocol';
import type { IsolatedVm } from '../code-steps/isolated-vm-runner.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { StepRunner } from '../steps/step-runner.ts';
import { loadIsolateFramework } from './isolate-framework.ts';
import { createIsolateHost } from './isolate-host.ts';
import { type BlankIsolate, createBlankIsolate, openRunIsolate } from './isolate-run.ts';
import { createIsolateSnapshots, type IsolateSnapshot } from './isolate-snapshots.ts';
import { createIsolateStepRunner } from './isolate-step-runner.ts';

/** A run in its own isolate: its steps, and the end of the isolate (always called). */
export interface IsolatedRun {
  steps: StepRunner;
  /** CPU time the run's isolate used, in milliseconds (for the engine's own figures). */
  cpuMs(): number;
  close(): void;
}

export interface RunIsolation {
  open(request: {
    job: EngineJob;
    bundle: FlowBundle;
    egressFetch: EgressFetch;
    respond(response: FlowResponse): Promise<void>;
    /** The run's log (redacting the run's connections, flow-executor.ts). */
    log: EngineLog;
  }): Promise<IsolatedRun>;
  /**
   * Between jobs (after a result is sent): starts a blank isolate like the last run's, so the
   * next run of the same pieces does not wait for one. No run has used it.
   */
  prepareNext(): void;
  /** Disposes of the blank isolate, if any. */
  close(): void;
}

export interface RunIsolationOptions {
  library(): Promise<IsolatedVm>;
  log: EngineLog;
  onCatastrophicError(message: string): void;
  /** The framework script; the built one by default. */
  framework?: () => Promise<string>;
  /** Checks pieces' inputs in the engine's realm (one per engine; a new one by default). */
  inputs?: InputValidators;
}

/**
 * RUN_ISOLATION=isolate, built once per engine: each run gets a fresh isolate from the snapshot
 * of its pieces, and nothing of it outlives the run. The limits are the code-step settings,
 * applied to the whole run: CODE_STEP_MEMORY_MB to the isolate's heap, CODE_STEP_TIMEOUT_MS to
 * the CPU time it may use (each code step keeps its own wall-clock CODE_STEP_TIMEOUT_MS too).
 */
export function createRunIsolation(options: RunIsolationOptions): RunIsolation {
  const inputs = options.inputs ?? createInputValidators();
  const snapshots = createIsolateSnapshots({
    library: options.library,
    framework: options.framework ?? loadIsolateFramework,
    log: options.log,
  });
  /** What the last run started from, and a blank isolate made from it between jobs. */
  let last: { ivm: IsolatedVm; snapshot: IsolateSnapshot; memoryMb: number } | undefined;
  let spare: { key: string; memoryMb: number; blank: Promise<BlankIsolate> } | undefined;
  const dropSpare = (): void => {
    spare?.blank.then(
      (blank) => blank.dispose(),
      () => {},
    );
    spare = undefined;
  };
  const blankFor = (ivm: IsolatedVm, snapshot: IsolateSnapshot, memoryMb: number): Promise<BlankIsolate> => {
    const taken = spare;
    spare = undefined;
    if (taken !== undefined && taken.key === snapshot.key && taken.memoryMb === memoryMb) {
      // A spare that failed to start is no reason to fail the run: start one now.
      return taken.blank.catch(() =>
        createBlankIsolate(ivm, snapshot, memoryMb, options.onCatastrophicError),
      );
    }
    taken?.blank.then(
      (blank) => blank.dispose(),
      () => {},
    );
    return createBlankIsolate(ivm, snapshot, memoryMb, options.onCatastrophicError);
  };

  return {
    prepareNext() {
      if (last === undefined || spare !== undefined) return;
      const { ivm, snapshot, memoryMb } = last;
      const blank = createBlankIsolate(ivm, snapshot, memoryMb, options.onCatastrophicError);
      blank.catch(() => {});
      spare = { key: snapshot.key, memoryMb, blank };
    },
    close: dropSpare,
    async open({ job, bundle, egressFetch, respond, log }) {
      const [ivm, snapshot] = await Promise.all([options.library(), snapshots.forPieces(job.pieces)]);
      const memoryMb = job.limits.codeStepMemoryMb;
      const blank = await blankFor(ivm, snapshot, memoryMb);
      last = { ivm, snapshot, memoryMb };
      const host = createIsolateHost({ runId: job.runId, respond, log });
      const run = openRunIsolate({
        ivm,
        blank,
        runId: job.runId,
        connections: job.connections,
        memoryMb,
        cpuLimitMs: job.limits.codeStepTimeoutMs,
        deadline: performance.now() + runWindowMs(job.limits.flowTimeoutMs),
        host,
      });
      return {
        steps: createIsolateStepRunner(
          { bundle, run, host, egressFetch, pieces: snapshot.pieces, inputs },
          job,
        ),
        cpuMs: run.cpuMs,
        close: run.close,
      };
    },
  };
}

/** The worker kills the engine at the flow timeout: a run's isolate stops first, leaving time to report. */
const REPORT_MARGIN_MS = 2_000;

function runWindowMs(flowTimeoutMs: number): number {
  return Math.max(flowTimeoutMs - REPORT_MARGIN_MS, flowTimeoutMs * 0.8);
}
