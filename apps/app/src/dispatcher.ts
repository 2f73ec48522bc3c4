import type { Logger } from '@flowbox/node-kit';
import {
  type DispatchedJob,
  type FinalRunStatus,
  FlowboxError,
  type JobProvisioning,
  type JobTimings,
  type PieceDownload,
  type PieceRef,
  type SerializedError,
  type StepResult,
} from '@flowbox/protocol';
import type { FlowBundleRecord, FlowsRepository } from './db/flows-repository.ts';
import type { PieceRecord, PiecesRepository } from './db/pieces-repository.ts';
import type { RunsRepository } from './db/runs-repository.ts';
import type { AppConfig } from './env.ts';
import type { LiveRuns } from './live-runs.ts';
import { type ObjectStorage, objectKeys } from './object-storage.ts';
import { PresignedDownloads } from './presigned-downloads.ts';
import type { LeasedJob } from './queue/job-broker.ts';
import type { RunProgressStore } from './runs/run-progress-store.ts';
import type { SyncResponseHub } from './sync/sync-response-hub.ts';
import type { TokenService } from './tokens.ts';

/**
 * Failures that say nothing about the flow, so another attempt may succeed: its engine died, or
 * its worker did. A flow's own failure or its timeout would only repeat.
 */
const RETRIED_ON = new Set<SerializedError['code']>(['ENGINE_CRASHED', 'WORKER_LOST']);

/** Seconds an engine token and presigned URLs outlive the flow timeout, for the final callbacks. */
export const ENGINE_TOKEN_GRACE_SECONDS = 60;

/**
 * A run's end as the app learns it: from the worker's result (with the engine's steps and log),
 * or from the app itself when no result can come (a lost worker, a job it could not dispatch).
 */
export interface JobOutcome {
  status: FinalRunStatus;
  error?: SerializedError | undefined;
  /** Present when a worker reported; otherwise the engine's callbacks are all there is. */
  steps?: StepResult[] | undefined;
  logKey?: string | null | undefined;
  logError?: SerializedError | undefined;
  timings?: JobTimings;
  provisioning?: JobProvisioning | undefined;
}

/**
 * Turns a leased job into what a worker needs (presigned bundle and piece downloads, a scoped
 * token, a presigned log upload) and closes runs whose engine could not: a crash, a timeout,
 * a worker that vanished.
 */
export class Dispatcher {
  readonly #flows: FlowsRepository;
  readonly #pieces: PiecesRepository;
  readonly #runs: RunsRepository;
  readonly #tokens: TokenService;
  readonly #storage: ObjectStorage;
  readonly #downloads: PresignedDownloads;
  readonly #live: LiveRuns;
  readonly #progress: RunProgressStore;
  readonly #logger: Logger;
  readonly #hub: SyncResponseHub;
  readonly #config: AppConfig;
  /** Published bundles are immutable, so they are cached for the process's life. */
  readonly #bundles = new Map<string, FlowBundleRecord>();
  /** Published piece archives by `name@version`; refreshed from Postgres on a miss. */
  readonly #pieceArchives = new Map<string, PieceRecord>();

  constructor(deps: {
    flows: FlowsRepository;
    pieces: PiecesRepository;
    runs: RunsRepository;
    tokens: TokenService;
    storage: ObjectStorage;
    live: LiveRuns;
    progress: RunProgressStore;
    logger: Logger;
    hub: SyncResponseHub;
    config: AppConfig;
  }) {
    this.#flows = deps.flows;
    this.#pieces = deps.pieces;
    this.#runs = deps.runs;
    this.#tokens = deps.tokens;
    this.#storage = deps.storage;
    this.#downloads = new PresignedDownloads((key, ttl) => deps.storage.presignDownload(key, ttl));
    this.#live = deps.live;
    this.#progress = deps.progress;
    this.#logger = deps.logger;
    this.#hub = deps.hub;
    this.#config = deps.config;
  }

  async dispatch(lease: LeasedJob, workerId: string): Promise<DispatchedJob> {
    const { data } = lease;
    const bundle = await this.#bundle(data.flowVersionId);
    const ttl = this.#config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS;
    const logKey = objectKeys.runLog(data.runId);
    const engineToken = this.#tokens.signEngineToken(
      { runId: data.runId, syncInstanceId: data.syncInstanceId },
      ttl,
    );
    const [started, bundleUrl, pieces, logUpload] = await Promise.all([
      this.#runs.markRunning(data.runId, workerId),
      this.#downloads.url(bundle.key, ttl),
      Promise.all(bundle.pieces.map((ref) => this.#pieceDownload(ref, ttl))),
      this.#storage.presignUploadForm(logKey, 'application/json', this.#config.RUN_LOG_MAX_BYTES, ttl),
    ]);
    if (!started) {
      // Its job came back (an app died holding it) after the run had already ended.
      throw new FlowboxError(
        'RUN_ALREADY_FINISHED',
        `run ${data.runId} has already ended; not running it again`,
      );
    }
    return {
      jobId: lease.jobId,
      runId: data.runId,
      flowId: data.flowId,
      flowVersionId: data.flowVersionId,
      bundle: { url: bundleUrl, sha256: bundle.sha256, sizeBytes: bundle.sizeBytes },
      pieces,
      trigger: data.trigger,
      engineToken,
      logUpload: { ...logUpload, key: logKey, maxBytes: this.#config.RUN_LOG_MAX_BYTES },
      limits: {
        flowTimeoutMs: this.#config.FLOW_TIMEOUT_SECONDS * 1000,
        codeStepTimeoutMs: this.#config.CODE_STEP_TIMEOUT_MS,
        codeStepMemoryMb: this.#config.CODE_STEP_MEMORY_MB,
      },
      acceptedAt: data.acceptedAt,
    };
  }

  /**
   * Records a run's end: its one durable write after it started. Without a worker's result (the
   * worker vanished), what the engine's callbacks reported stands in: its steps, and its own
   * verdict when its finish callback came before the worker was lost. A sync caller still
   * waiting hears about the end at once. With `fetchNext`, resolves with the next waiting job,
   * leased in the same Redis call (see LeasedJob.complete).
   */
  async conclude(
    lease: LeasedJob,
    outcome: JobOutcome,
    options: { fetchNext: boolean } = { fetchNext: false },
  ): Promise<LeasedJob | null> {
    const { runId, syncInstanceId } = lease.data;
    const live = this.#live.get(runId);
    const engineVerdict = outcome.steps === undefined ? live?.finished : undefined;
    const record: Pick<JobOutcome, 'status' | 'error' | 'logKey' | 'logError'> = engineVerdict ?? outcome;
    const crashed = record.error !== undefined && RETRIED_ON.has(record.error.code);
    if (crashed && record.error !== undefined && lease.attempt < this.#config.RUN_MAX_ATTEMPTS) {
      // Another attempt, from the start: the sync caller keeps waiting for its answer.
      this.#live.forget(runId);
      await this.#progress.forget(runId).catch((error: unknown) => {
        this.#logger.warn({ err: error, runId }, "could not drop a retried run's progress");
      });
      if (await this.#runs.requeue(runId, record.error)) {
        return lease.fail(record.error.message, { ...options, retry: true });
      }
    }
    this.#live.end(runId);
    const finalised = await this.#runs.finish(runId, {
      status: record.status,
      error: record.error,
      // A crashed or timed-out engine reported no steps to its worker; its callbacks may have.
      steps:
        outcome.steps !== undefined && outcome.steps.length > 0
          ? outcome.steps
          : await this.#reportedSteps(runId, live?.steps ?? []),
      logKey: record.logKey,
      logError: record.logError,
      timings: outcome.timings,
      provisioning: outcome.provisioning,
    });
    if (finalised && syncInstanceId !== null) {
      await this.#hub.publish(syncInstanceId, {
        version: 1,
        type: 'run-ended',
        runId,
        status: record.status,
        ...(record.error === undefined ? {} : { error: record.error }),
      });
    }
    if (record.status === 'SUCCEEDED') return lease.complete(options);
    return lease.fail(record.error?.message ?? record.status, options);
  }

  /** What the engine reported through its callbacks: progress and response (Redis), then finish. */
  async #reportedSteps(runId: string, finishSteps: StepResult[]): Promise<StepResult[]> {
    try {
      return [...(await this.#progress.read(runId)).steps, ...finishSteps];
    } catch (error) {
      this.#logger.warn({ err: error, runId }, "could not read a run's progress from Redis");
      return finishSteps;
    }
  }

  async #bundle(flowVersionId: string): Promise<FlowBundleRecord> {
    const cached = this.#bundles.get(flowVersionId);
    if (cached !== undefined) return cached;
    const version = await this.#flows.getVersion(flowVersionId);
    if (version?.bundle == null) {
      throw new FlowboxError(
        'FLOW_VERSION_NOT_FOUND',
        `flow version ${flowVersionId} has no published bundle`,
      );
    }
    this.#bundles.set(flowVersionId, version.bundle);
    return version.bundle;
  }

  async #pieceDownload(ref: PieceRef, ttlSeconds: number): Promise<PieceDownload> {
    const id = `${ref.name}@${ref.version}`;
    let record = this.#pieceArchives.get(id);
    if (record === undefined) {
      for (const piece of await this.#pieces.list())
        this.#pieceArchives.set(`${piece.name}@${piece.version}`, piece);
      record = this.#pieceArchives.get(id);
    }
    if (record === undefined) throw new FlowboxError('PROVISION_FAILED', `piece ${id} is not published`);
    return {
      name: record.name,
      version: record.version,
      url: await this.#downloads.url(record.archiveKey, ttlSeconds),
      sha256: record.sha256,
      sizeBytes: record.sizeBytes,
    };
  }
}
