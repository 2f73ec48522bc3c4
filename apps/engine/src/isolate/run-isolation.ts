import type { EgressFetch } from '@flowbox/egress';
import { createInputValidators, type InputValidators } from '@flowbox/pieces-framework/validate';
import type { EngineJob, FlowBundle, FlowResponse } from '@flowbox/protocol';
import type { Isolate } from 'isolated-vm';
import type { IsolatedVm } from '../code-steps/isolated-vm-runner.ts';
import type { LeafExecutor } from '../flows/interpreter/leaf-executor.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { ProvisionedPiece } from '../pieces/piece-loader.ts';
import { loadIsolateFramework } from './isolate-framework.ts';
import { createIsolateHost } from './isolate-host.ts';
import { createIsolateLeafExecutor } from './isolate-leaf-executor.ts';
import {
  type BlankContext,
  createBlankContext,
  createSnapshotIsolate,
  openRunIsolate,
} from './isolate-run.ts';
import { createIsolateSnapshots, type IsolateSnapshot } from './isolate-snapshots.ts';

/** A run in its own context: its leaves' executor, and the end of the context (always called). */
export interface IsolatedRun {
  leaves: LeafExecutor;
  /** CPU time the run used in its isolate, in milliseconds (for the engine's own figures). */
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
   * Between jobs (after a result is sent): makes a blank context like the last run's, in the
   * isolate the last run used or, when that one was recycled, in a fresh one, so the next run of
   * the same pieces does not wait for one. No run has used it.
   */
  prepareNext(): void;
  /**
   * Before the engine's first job (a preload): builds the snapshot of these pieces, an isolate
   * from it and the first run's blank context, so that job pays for none of them.
   */
  prepare(request: {
    pieces: readonly ProvisionedPiece[];
    memoryMb: number;
    maxRuns?: number;
  }): Promise<void>;
  /**
   * How many isolates and blank contexts the engine has made so far, and how many runs took a
   * context (tests, measurements).
   */
  counts(): { isolates: number; contexts: number; runs: number };
  /** Releases the blank context and disposes of the isolate, if any. */
  close(): void;
}

export interface RunIsolationOptions {
  library(): Promise<IsolatedVm>;
  log: EngineLog;
  onCatastrophicError(message: string): void;
  /**
   * Runs one isolate serves, each in its own context, before the next run gets a fresh isolate,
   * when the job does not say (its `isolateMaxRuns`, the worker's ISOLATE_MAX_RUNS).
   */
  maxRunsPerIsolate?: number;
  /** The framework script; the built one by default. */
  framework?: () => Promise<string>;
  /** Checks pieces' inputs in the engine's realm (one per engine; a new one by default). */
  inputs?: InputValidators;
}

/** ISOLATE_MAX_RUNS's default (docs/performance.md: what each run of a reused isolate costs). */
export const DEFAULT_ISOLATE_MAX_RUNS = 100;
/**
 * A reused isolate whose heap (live data and garbage not yet collected) holds more than this
 * share of its limit after a run is recycled: the next run starts with its whole limit free.
 */
const HEAP_RECYCLE_SHARE = 0.5;

/** Why an isolate is recycled (the engine's `recycled a run isolate` log line). */
type RecycleReason = 'max-runs' | 'limit' | 'heap' | 'pieces-or-limit' | 'spare-failed';

/** An isolate from one snapshot with one heap limit, which runs take contexts of, one at a time. */
interface ReusedIsolate {
  isolate: Isolate;
  key: string;
  memoryMb: number;
  /** Runs that took a context of it. */
  runs: number;
}

/**
 * RUN_ISOLATION=isolate, built once per engine: each run gets a fresh context from the snapshot
 * of its pieces (its own globals, built-ins and piece modules, deserialized from the snapshot),
 * in an isolate that serves up to `maxRunsPerIsolate` runs of the same pieces and heap limit one
 * after another. The isolate is recycled after those runs, when its heap passes half its limit
 * after a run, when a run breaks a limit (CPU time, memory, its deadline) or when the next run
 * needs other pieces or another limit. The limits are the code-step settings: CODE_STEP_MEMORY_MB
 * for the isolate's heap, CODE_STEP_TIMEOUT_MS for the CPU time one run may use in it (each code
 * step keeps its own wall-clock CODE_STEP_TIMEOUT_MS too).
 */
export function createRunIsolation(options: RunIsolationOptions): RunIsolation {
  const maxRunsOf = (job: EngineJob): number =>
    job.isolateMaxRuns ?? options.maxRunsPerIsolate ?? DEFAULT_ISOLATE_MAX_RUNS;
  const inputs = options.inputs ?? createInputValidators();
  const snapshots = createIsolateSnapshots({
    library: options.library,
    framework: options.framework ?? loadIsolateFramework,
    log: options.log,
  });
  const counts = { isolates: 0, contexts: 0, runs: 0 };
  /** The isolate the next run takes a context of, while it may serve one. */
  let reused: ReusedIsolate | undefined;
  /** What the last run started from, for the context made between jobs. */
  let last: { ivm: IsolatedVm; snapshot: IsolateSnapshot; memoryMb: number; maxRuns: number } | undefined;
  let spare: { home: ReusedIsolate; blank: Promise<BlankContext> } | undefined;

  /** Disposes of an isolate no later run takes; logged with why, unless the engine is closing. */
  const recycle = (home: ReusedIsolate, reason?: RecycleReason): void => {
    if (reused === home) reused = undefined;
    if (!home.isolate.isDisposed) home.isolate.dispose();
    if (reason !== undefined) options.log('info', 'recycled a run isolate', { reason, runs: home.runs });
  };
  const dropSpare = (): void => {
    spare?.blank.then(
      (blank) => blank.release(),
      () => {},
    );
    spare = undefined;
  };
  /** The isolate for these pieces and limit: the reused one while it may serve, else a fresh one. */
  const homeFor = (
    ivm: IsolatedVm,
    snapshot: IsolateSnapshot,
    memoryMb: number,
    maxRuns: number,
  ): ReusedIsolate => {
    const home = reused;
    if (home !== undefined) {
      const fits = home.key === snapshot.key && home.memoryMb === memoryMb;
      if (fits && home.runs < maxRuns && !home.isolate.isDisposed) return home;
      recycle(home, fits ? 'max-runs' : 'pieces-or-limit');
    }
    const isolate = createSnapshotIsolate(ivm, snapshot, memoryMb, options.onCatastrophicError);
    counts.isolates += 1;
    reused = { isolate, key: snapshot.key, memoryMb, runs: 0 };
    return reused;
  };
  const blankFor = async (
    ivm: IsolatedVm,
    snapshot: IsolateSnapshot,
    memoryMb: number,
    maxRuns: number,
  ): Promise<{ home: ReusedIsolate; blank: BlankContext }> => {
    const taken = spare;
    spare = undefined;
    let home = homeFor(ivm, snapshot, memoryMb, maxRuns);
    if (taken !== undefined && taken.home === home) {
      try {
        return { home, blank: await taken.blank };
      } catch {
        // A spare that failed to start is no reason to fail the run: a fresh isolate makes one.
        recycle(home, 'spare-failed');
        home = homeFor(ivm, snapshot, memoryMb, maxRuns);
      }
    } else {
      taken?.blank.then(
        (blank) => blank.release(),
        () => {},
      );
    }
    counts.contexts += 1;
    return { home, blank: await createBlankContext(ivm, home.isolate) };
  };
  /** After a run: the isolate serves the next one only if the run left it whole and roomy. */
  const afterRun = (home: ReusedIsolate, reusable: boolean, maxRuns: number): void => {
    if (!reusable || home.isolate.isDisposed) {
      recycle(home, 'limit');
      return;
    }
    if (home.runs >= maxRuns) {
      recycle(home, 'max-runs');
      return;
    }
    const heap = home.isolate.getHeapStatisticsSync();
    const usedMb = (heap.used_heap_size + heap.externally_allocated_size) / 1024 / 1024;
    if (usedMb > home.memoryMb * HEAP_RECYCLE_SHARE) recycle(home, 'heap');
  };

  const prepareNext = (): void => {
    if (last === undefined || spare !== undefined) return;
    const { ivm, snapshot, memoryMb, maxRuns } = last;
    const home = homeFor(ivm, snapshot, memoryMb, maxRuns);
    const blank = createBlankContext(ivm, home.isolate);
    counts.contexts += 1;
    blank.catch(() => {});
    spare = { home, blank };
  };

  return {
    prepareNext,
    async prepare({ pieces, memoryMb, maxRuns }) {
      const [ivm, snapshot] = await Promise.all([options.library(), snapshots.forPieces(pieces)]);
      // A job that came meanwhile made its own start: the context made after it serves the next.
      if (last !== undefined) return;
      last = {
        ivm,
        snapshot,
        memoryMb,
        maxRuns: maxRuns ?? options.maxRunsPerIsolate ?? DEFAULT_ISOLATE_MAX_RUNS,
      };
      prepareNext();
      await spare?.blank;
    },
    counts: () => ({ ...counts }),
    close() {
      dropSpare();
      if (reused !== undefined) recycle(reused);
    },
    async open({ job, bundle, egressFetch, respond, log }) {
      const [ivm, snapshot] = await Promise.all([options.library(), snapshots.forPieces(job.pieces)]);
      const memoryMb = job.limits.codeStepMemoryMb;
      const maxRuns = maxRunsOf(job);
      const { home, blank } = await blankFor(ivm, snapshot, memoryMb, maxRuns);
      home.runs += 1;
      counts.runs += 1;
      last = { ivm, snapshot, memoryMb, maxRuns };
      const host = createIsolateHost({ runId: job.runId, respond, log });
      const run = openRunIsolate({
        ivm,
        blank,
        runId: job.runId,
        memoryMb,
        cpuLimitMs: job.limits.codeStepTimeoutMs,
        deadline: performance.now() + runWindowMs(job.limits.flowTimeoutMs),
        host,
      });
      return {
        leaves: createIsolateLeafExecutor(
          { bundle, run, host, egressFetch, pieces: snapshot.pieces, inputs },
          job,
        ),
        cpuMs: run.cpuMs,
        close() {
          run.close();
          afterRun(home, run.reusable(), maxRuns);
        },
      };
    },
  };
}

/** The worker kills the engine at the flow timeout: a run's isolate stops first, leaving time to report. */
const REPORT_MARGIN_MS = 2_000;

function runWindowMs(flowTimeoutMs: number): number {
  return Math.max(flowTimeoutMs - REPORT_MARGIN_MS, flowTimeoutMs * 0.8);
}
