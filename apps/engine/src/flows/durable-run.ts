import {
  type Checkpoint,
  DEFAULT_MAX_PAUSE_MS,
  DEFAULT_PAUSE_MIN_MS,
  type EngineJob,
  FlowboxError,
  type SerializedError,
  serializeError,
  type WaitPoint,
} from '@flowbox/protocol';
import type { AppClient } from '../host/app-client.ts';
import { downloadCheckpoint, uploadCheckpoint } from '../host/checkpoint-transfer.ts';
import type { HttpClient } from '../host/http-client.ts';
import { buildCheckpoint } from './interpreter/checkpoint.ts';
import type { Clock, DurableDeps } from './interpreter/interpreter-context.ts';

/**
 * The executor's part of durable runs: the checkpoint a resumed run reads before its steps, what
 * the interpreter's waiting points need, and the checkpoint a pausing run stores.
 */

/** A checkpoint read when the job names no bound (RUN_CHECKPOINT_MAX_BYTES's default). */
const DEFAULT_CHECKPOINT_MAX_BYTES = 16 * 1024 * 1024;

const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A resumed run's checkpoint (job.resume): it must be this run's, else CHECKPOINT_FAILED. */
export async function readCheckpoint(
  http: HttpClient,
  job: EngineJob,
  timeoutMs: number,
): Promise<Checkpoint> {
  if (job.resume === undefined) throw new FlowboxError('INTERNAL', 'the job does not resume a run');
  const { url, key } = job.resume.checkpoint;
  const maxBytes = job.checkpointUpload?.maxBytes ?? DEFAULT_CHECKPOINT_MAX_BYTES;
  const checkpoint = await downloadCheckpoint(http, url, maxBytes, timeoutMs);
  if (checkpoint.runId !== job.runId || checkpoint.flowVersionId !== job.flowVersionId) {
    throw new FlowboxError(
      'CHECKPOINT_FAILED',
      `the checkpoint ${key} is of run ${checkpoint.runId} (${checkpoint.flowVersionId}), not of this one`,
    );
  }
  return checkpoint;
}

/** What the waiting points and the replay read: one object per run, nothing per step. */
export function durableDeps(
  clock: Clock | undefined,
  job: EngineJob,
  app: AppClient,
  resumed: Checkpoint | undefined,
): DurableDeps {
  return {
    clock: clock ?? SYSTEM_CLOCK,
    pauseMinMs: job.limits.pauseMinMs ?? DEFAULT_PAUSE_MIN_MS,
    maxPauseMs: job.limits.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS,
    memo: resumed === undefined ? undefined : new Map(Object.entries(resumed.steps)),
    record: job.checkpointUpload === undefined ? undefined : new Map(),
    values: job.resume?.values ?? {},
    waitUrls: job.waitUrls === undefined ? undefined : { runId: job.runId, urls: job.waitUrls },
    startSubflow: (start) => app.startSubflow(start),
  };
}

/**
 * A paused ending's checkpoint, built from what the run recorded. A job with nowhere to store it
 * (no checkpointUpload: the app did not expect this version to pause) fails INTERNAL.
 */
export function pausedRun(
  job: EngineJob,
  waits: WaitPoint[],
  durable: DurableDeps,
  resumed: Checkpoint | undefined,
): { waits: WaitPoint[]; checkpoint: Checkpoint } {
  if (job.checkpointUpload === undefined || durable.record === undefined) {
    throw new FlowboxError(
      'INTERNAL',
      `the run reached a waiting point (${waits[0]?.path}) but its job has no checkpointUpload to store its checkpoint in`,
    );
  }
  return { waits, checkpoint: buildCheckpoint(job, durable.record, resumed) };
}

/** Uploads a pausing run's checkpoint: its key, or the CHECKPOINT_FAILED that fails the attempt. */
export async function storeCheckpoint(
  http: HttpClient,
  job: EngineJob,
  checkpoint: Checkpoint,
  timeoutMs: number,
): Promise<{ key: string; ms: number; error?: SerializedError }> {
  const started = performance.now();
  const target = job.checkpointUpload;
  if (target === undefined) throw new FlowboxError('INTERNAL', 'the job has no checkpointUpload');
  try {
    await uploadCheckpoint(http, target, checkpoint, timeoutMs);
    return { key: target.key, ms: performance.now() - started };
  } catch (error) {
    return {
      key: target.key,
      ms: performance.now() - started,
      error: serializeError(error, 'CHECKPOINT_FAILED'),
    };
  }
}
