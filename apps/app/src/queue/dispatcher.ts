import {
  type DispatchedJob,
  type DispatchedPollJob,
  FlowboxError,
  type LogUpload,
  type PieceDownload,
  type PieceRef,
  type ResolvedConnections,
  type RunIsolation,
  type RunJobData,
  type RunOutcome,
  type RunResume,
  type StepTestJobData,
  type TriggerPayload,
  type WaitUrls,
} from '@flowbox/protocol';
import { type Tracer, traced } from '@flowbox/tracing';
import type { LRUCache } from 'lru-cache';
import { boundedCache, type CacheUsage, usageOf } from '../cache/bounded-cache.ts';
import type { Connections } from '../connections/connections.ts';
import type { AppConfig } from '../env.ts';
import type { FlowBundleRecord, FlowsRepository } from '../flows/flows-repository.ts';
import type { PieceRecord, PiecesRepository } from '../pieces/pieces-repository.ts';
import type { ConcludeResult, RunAttempt, RunConclusion, RunLifecycle } from '../runs/run-lifecycle.ts';
import type { ResumeState } from '../runs/run-waits.ts';
import type { LogFailure } from '../runs/runs-repository.ts';
import type { StepTests } from '../step-tests/step-tests.ts';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import { PresignedDownloads } from '../storage/presigned-downloads.ts';
import type { TokenService } from '../tokens.ts';
import {
  checkpointKey,
  type PauseTraits,
  pauseTraits,
  waitUrlKey,
  waitUrlSecret,
} from './durable-dispatch.ts';
import { flowIsolation } from './flow-isolation.ts';
import type { LeasedJob } from './leased-job.ts';

/** Seconds an engine token and presigned URLs outlive the flow timeout, for the final callbacks. */
export const ENGINE_TOKEN_GRACE_SECONDS = 60;

/** How long a job whose flow is at FLOW_MAX_CONCURRENT_RUNS stays out of the queue. */
export const BUSY_FLOW_POSTPONE_MS = 500;

/**
 * A leased job that may not start now: its flow runs FLOW_MAX_CONCURRENT_RUNS already. Not an
 * error a run ends with (the run stays QUEUED): the gateway postpones the job and hands out
 * another.
 */
export class FlowBusy extends Error {
  readonly runId: string;

  constructor(runId: string) {
    super(`run ${runId} waits: its flow runs as many runs as it may`);
    this.name = 'FlowBusy';
    this.runId = runId;
  }
}

/**
 * Turns a leased job into what a worker needs (presigned bundle and piece downloads, a scoped
 * token, a presigned log upload), and settles the job once its attempt has ended (the run's
 * states are the lifecycle's).
 */
export class Dispatcher {
  readonly #flows: FlowsRepository;
  readonly #pieces: PiecesRepository;
  readonly #lifecycle: RunLifecycle;
  readonly #tokens: TokenService;
  readonly #storage: ObjectStorage;
  readonly #downloads: PresignedDownloads;
  readonly #config: AppConfig;
  readonly #tracer: Tracer | null;
  readonly #connections: Connections;
  readonly #stepTests: Pick<StepTests, 'answer'> | null;
  readonly #resumeStates: ResumeStates;
  readonly #publicUrl: () => string | null;
  readonly #waitUrlSecret: string;
  /**
   * Published bundles (and the connections they reference) by flow version. Immutable, so never
   * stale: the bounds only keep the least recently dispatched (DISPATCH_CACHE_MAX_*).
   */
  readonly #bundles: LRUCache<string, PublishedVersion>;
  /** Published piece archives by `name@version`, immutable too; read from Postgres on a miss. */
  readonly #pieceArchives: LRUCache<string, PieceRecord>;

  constructor(deps: {
    flows: FlowsRepository;
    pieces: PiecesRepository;
    lifecycle: RunLifecycle;
    tokens: TokenService;
    storage: ObjectStorage;
    config: AppConfig;
    /** Null when tracing is off. */
    tracer: Tracer | null;
    connections: Connections;
    /** Where a step test's result goes (its caller); without, test jobs are refused. */
    stepTests?: Pick<StepTests, 'answer'>;
    /** What a resume job's dispatch reads of its run (run-waits.ts). */
    resumeStates: ResumeStates;
    /** The base of wait URLs: PUBLIC_URL, or where the app listens; null before it listens. */
    publicUrl: () => string | null;
  }) {
    this.#connections = deps.connections;
    this.#stepTests = deps.stepTests ?? null;
    this.#resumeStates = deps.resumeStates;
    this.#publicUrl = deps.publicUrl;
    this.#waitUrlSecret = waitUrlSecret(deps.config);
    this.#flows = deps.flows;
    this.#pieces = deps.pieces;
    this.#lifecycle = deps.lifecycle;
    this.#tokens = deps.tokens;
    this.#storage = deps.storage;
    const bounds = {
      maxEntries: deps.config.DISPATCH_CACHE_MAX_ENTRIES,
      maxBytes: deps.config.DISPATCH_CACHE_MAX_BYTES,
    };
    this.#bundles = boundedCache(bounds);
    this.#pieceArchives = boundedCache(bounds);
    this.#downloads = new PresignedDownloads((key, ttl) => deps.storage.presignDownload(key, ttl), {
      maxEntries: bounds.maxEntries,
    });
    this.#config = deps.config;
    this.#tracer = deps.tracer;
  }

  /** What the bundle, piece-archive and download-URL caches hold now. */
  cacheUsage(): Record<'flow_bundles' | 'piece_archives' | 'download_urls', CacheUsage> {
    return {
      flow_bundles: usageOf(this.#bundles),
      piece_archives: usageOf(this.#pieceArchives),
      download_urls: this.#downloads.usage(),
    };
  }

  /** The job for `workerId`; a traced run's carries the `dispatch` span for the worker's spans. */
  dispatch(lease: LeasedJob, workerId: string): Promise<DispatchedJob> {
    const { data } = lease;
    if (data.type === 'test-step') return this.#dispatchTest(lease.jobId, data);
    const parent = data.traceparent;
    if (this.#tracer === null || parent === undefined) return this.#dispatch(lease, data, workerId);
    const span = this.#tracer.startSpan('dispatch', {
      parent,
      attributes: {
        'flowbox.run_id': data.runId,
        'flowbox.worker_id': workerId,
        'flowbox.attempt': lease.attempt,
      },
    });
    return traced(span, async () => {
      const job = await this.#dispatch(lease, data, workerId);
      if (span.traceparent !== undefined) job.traceparent = span.traceparent;
      return job;
    });
  }

  async #dispatch(lease: LeasedJob, data: RunJobData, workerId: string): Promise<DispatchedJob> {
    const { bundle, connections: names, isolation, traits } = await this.#bundle(data.flowVersionId);
    // Opened now, for this attempt only: the values go to the worker in this answer and nowhere
    // else (not the job in Redis, not a log). Settled here so a refusal below leaves no rejection.
    const connections =
      names.length === 0
        ? null
        : this.#connections.resolve(names).then(
            (values) => ({ values }),
            (error: unknown) => ({ error }),
          );
    const ttl = this.#config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS;
    const logKey = objectKeys.runLog(data.runId);
    const [started, bundleUrl, pieces, logUpload, checkpointUpload] = await Promise.all([
      lease.started === true
        ? ('started' as const)
        : this.#lifecycle.start(data.runId, workerId, data.resume ?? 0),
      this.#downloads.url(bundle.key, ttl),
      Promise.all(bundle.pieces.map((ref) => this.#pieceDownload(ref, ttl))),
      this.#storage.presignUploadForm(logKey, 'application/json', this.#config.RUN_LOG_MAX_BYTES, ttl),
      traits.canPause ? this.#checkpointUpload(data, ttl) : undefined,
    ]);
    if (started === 'busy') throw new FlowBusy(data.runId);
    if (started !== 'started' && started !== 'resumed') {
      // Its job came back (an app died holding it, a lost job enqueued again) after the run had
      // ended (or its sync caller left before it started: CALLER_GONE), paused again, or resumed
      // past the pause this job was for (a pause's delayed resume job once a request resumed
      // it, or the run was deleted): nothing to run. The gateway drops the job.
      throw new FlowboxError('RUN_ALREADY_FINISHED', staleJobMessage(data, started));
    }
    let values: ResolvedConnections | undefined;
    if (connections !== null) {
      const resolved = await connections;
      // CONNECTION_MISSING: the gateway ends the run with it, naming the connection.
      if ('error' in resolved) throw resolved.error;
      values = resolved.values;
    }
    // Read once the run is ours (RUNNING): what arrived for its waits is final by then.
    const resumed = data.resume === undefined ? undefined : await this.#resume(data.runId, ttl);
    const resume = resumed?.resume;
    let { syncInstanceId } = data;
    if (resumed !== undefined && resumed.syncInstanceId !== syncInstanceId) {
      // A `/sync` wait URL's resume named its app after this job was written (a pause's delayed
      // resume that came due in the same instant): the caller is answered through the row's.
      syncInstanceId = resumed.syncInstanceId;
      lease.data = { ...data, syncInstanceId };
    }
    const trigger = data.trigger ?? resumed?.trigger;
    if (trigger === undefined) {
      throw new FlowboxError('INTERNAL', `run ${data.runId} has no trigger to run with; it cannot go on`);
    }
    const engineToken = this.#tokens.signEngineToken({ runId: data.runId, syncInstanceId }, ttl);
    const waitUrls = traits.hasWaits ? this.#waitUrls(data.runId) : undefined;
    return {
      jobId: lease.jobId,
      runId: data.runId,
      flowId: data.flowId,
      flowVersionId: data.flowVersionId,
      bundle: { url: bundleUrl, sha256: bundle.sha256, sizeBytes: bundle.sizeBytes },
      pieces,
      trigger,
      ...(values === undefined ? {} : { connections: values }),
      engineToken,
      logUpload: { ...logUpload, key: logKey, maxBytes: this.#config.RUN_LOG_MAX_BYTES },
      ...(checkpointUpload === undefined ? {} : { checkpointUpload }),
      ...(resume === undefined ? {} : { resume }),
      ...(waitUrls === undefined ? {} : { waitUrls }),
      limits: {
        flowTimeoutMs: this.#config.FLOW_TIMEOUT_SECONDS * 1000,
        codeStepTimeoutMs: this.#config.CODE_STEP_TIMEOUT_MS,
        codeStepMemoryMb: this.#config.CODE_STEP_MEMORY_MB,
        loopMaxIterations: this.#config.LOOP_MAX_ITERATIONS,
        pauseMinMs: this.#config.PAUSE_MIN_MS,
        maxPauseMs: this.#config.RUN_MAX_PAUSE_DAYS * 86_400_000,
      },
      acceptedAt: data.acceptedAt,
      isolation,
    };
  }

  /** Where this attempt writes the checkpoint should the run pause: `checkpoints/<runId>/<resumes>.json`. */
  async #checkpointUpload(data: RunJobData, ttl: number): Promise<LogUpload> {
    const key = checkpointKey(data.runId, data.resume ?? 0);
    const maxBytes = this.#config.RUN_CHECKPOINT_MAX_BYTES;
    const form = await this.#storage.presignUploadForm(key, 'application/json', maxBytes, ttl);
    return { ...form, key, maxBytes };
  }

  /**
   * A resume job's checkpoint (presigned GET), what arrived for its waits, and how late it comes;
   * with the app holding its sync caller now and the run's trigger (its job carries none).
   */
  async #resume(
    runId: string,
    ttl: number,
  ): Promise<{ resume: RunResume; syncInstanceId: string | null; trigger: TriggerPayload }> {
    const state = await this.#resumeStates.read(runId);
    if (state.checkpointKey === null || state.trigger === null) {
      throw new FlowboxError('INTERNAL', `run ${runId} resumes but has no checkpoint; it cannot go on`);
    }
    this.#resumeStates.dispatched?.(state.lateMs);
    const resume: RunResume = {
      checkpoint: {
        url: await this.#storage.presignDownload(state.checkpointKey, ttl),
        key: state.checkpointKey,
      },
      values: state.values,
      resumedAt: new Date().toISOString(),
      lateMs: state.lateMs,
    };
    return { resume, syncInstanceId: state.syncInstanceId, trigger: state.trigger };
  }

  #waitUrls(runId: string): WaitUrls | undefined {
    const baseUrl = this.#publicUrl();
    if (baseUrl === null) return undefined;
    return { baseUrl, key: waitUrlKey(this.#waitUrlSecret, runId) };
  }

  /**
   * A step test's job: the run's dispatch (its version's pieces and isolation, its connections
   * opened now, a token scoped to the test) with no run to start and no log to keep.
   */
  async #dispatchTest(jobId: string, data: StepTestJobData): Promise<DispatchedJob> {
    if (this.#stepTests === null) throw new FlowboxError('INTERNAL', 'this app does not run step tests');
    const ttl = this.#config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS;
    // A test's engine uploads nothing: the form's bound sizes what its answer may carry.
    const logKey = objectKeys.stepTestLog(data.testId);
    const [records, bundleUrl, pieces, logUpload, connections] = await Promise.all([
      Promise.all(data.bundle.pieces.map((ref) => this.#pieceRecord(ref))),
      this.#downloads.url(data.bundle.key, ttl),
      Promise.all(data.bundle.pieces.map((ref) => this.#pieceDownload(ref, ttl))),
      this.#storage.presignUploadForm(logKey, 'application/json', this.#config.RUN_LOG_MAX_BYTES, ttl),
      data.connections.length === 0 ? undefined : this.#connections.resolve(data.connections),
    ]);
    return {
      jobId,
      runId: data.testId,
      flowId: data.flowId,
      flowVersionId: data.flowVersionId,
      bundle: { url: bundleUrl, sha256: data.bundle.sha256, sizeBytes: data.bundle.sizeBytes },
      pieces,
      trigger: { method: 'POST', headers: {}, query: {}, body: {}, rawBody: null, rawBodyEncoding: 'utf8' },
      ...(connections === undefined ? {} : { connections }),
      engineToken: this.#tokens.signEngineToken(
        { runId: data.testId, syncInstanceId: data.syncInstanceId },
        ttl,
      ),
      logUpload: { ...logUpload, key: logKey, maxBytes: this.#config.RUN_LOG_MAX_BYTES },
      limits: {
        flowTimeoutMs: this.#config.FLOW_TIMEOUT_SECONDS * 1000,
        codeStepTimeoutMs: this.#config.CODE_STEP_TIMEOUT_MS,
        codeStepMemoryMb: this.#config.CODE_STEP_MEMORY_MB,
        loopMaxIterations: this.#config.LOOP_MAX_ITERATIONS,
      },
      acceptedAt: data.acceptedAt,
      isolation: flowIsolation(records, this.#config.TRUSTED_PIECES),
      test: data.test,
    };
  }

  /**
   * A polling trigger's poll as a worker needs it: the flow's bundle (its trigger and input) and
   * the trigger's piece, presigned like a run's, and the state to poll from. No token and no log:
   * a poll reports only through its worker.
   */
  async dispatchPoll(poll: {
    jobId: string;
    flowId: string;
    flowVersionId: string;
    piece: string;
    state: unknown;
  }): Promise<DispatchedPollJob> {
    const { bundle } = await this.#bundle(poll.flowVersionId);
    const ttl = this.#config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS;
    const refs = bundle.pieces.filter((ref) => ref.name === poll.piece);
    const [bundleUrl, pieces] = await Promise.all([
      this.#downloads.url(bundle.key, ttl),
      Promise.all(refs.map((ref) => this.#pieceDownload(ref, ttl))),
    ]);
    return {
      jobId: poll.jobId,
      flowId: poll.flowId,
      flowVersionId: poll.flowVersionId,
      bundle: { url: bundleUrl, sha256: bundle.sha256, sizeBytes: bundle.sizeBytes },
      pieces,
      state: poll.state ?? null,
      timeoutMs: this.#config.FLOW_TIMEOUT_SECONDS * 1000,
      maxResultBytes: this.#config.RUN_LOG_MAX_BYTES,
      acceptedAt: Date.now(),
    };
  }

  /**
   * Records an attempt's end through the run lifecycle, then settles its job: back to the queue
   * for a retry, completed or failed otherwise. With `fetchNext`, resolves with the next waiting
   * job, leased in the same Redis call (see LeasedJob.complete).
   */
  async conclude(
    lease: LeasedJob,
    conclusion: RunConclusion,
    options: ConcludeOptions = { fetchNext: false },
  ): Promise<LeasedJob | null> {
    const { outcome } = conclusion;
    const { data } = lease;
    if (data.type === 'test-step') {
      // Tried once: whatever ended it is the answer, and nothing is recorded.
      await this.#stepTests?.answer(data, outcome);
      return lease.complete(options);
    }
    const parent = options.traceparent ?? data.traceparent;
    if (this.#tracer === null || parent === undefined) {
      return this.#settle(
        lease,
        outcome,
        await this.#lifecycle.conclude(attemptOf(data, lease.attempt), conclusion),
        options,
      );
    }
    // The final write (or the retry), under the worker's job span when its result said which.
    const span = this.#tracer.startSpan('run.finish', {
      parent,
      attributes: { 'flowbox.run_id': data.runId, 'flowbox.run.status': outcome.status },
    });
    const concluded = await traced(span, async () => {
      const result = await this.#lifecycle.conclude(attemptOf(data, lease.attempt), conclusion);
      span.setAttribute('flowbox.run.conclusion', result);
      if (outcome.error !== undefined) span.fail(outcome.error);
      return result;
    });
    return this.#settle(lease, outcome, concluded, options);
  }

  /** A final run's log upload, which followed its result, failed (RunLifecycle.logFailed). */
  logFailed(failure: LogFailure): Promise<boolean> {
    return this.#lifecycle.logFailed(failure);
  }

  /** An attempt whose worker disconnected with it in flight (see RunLifecycle.lostWorkerOutcome). */
  async workerLost(lease: LeasedJob): Promise<void> {
    await this.conclude(lease, this.#lifecycle.lostWorkerOutcome());
  }

  #settle(
    lease: LeasedJob,
    outcome: Pick<RunOutcome, 'status' | 'error'>,
    result: ConcludeResult,
    options: ConcludeOptions,
  ): Promise<LeasedJob | null> {
    if (result === 'retried') {
      return lease.fail(outcome.error?.message ?? outcome.status, { ...options, retry: true });
    }
    // A paused run's job is done: its resume is another job.
    if (outcome.status === 'SUCCEEDED' || result === 'paused') return lease.complete(options);
    return lease.fail(outcome.error?.message ?? outcome.status, options);
  }

  async #bundle(flowVersionId: string): Promise<PublishedVersion> {
    const cached = this.#bundles.get(flowVersionId);
    if (cached !== undefined) return cached;
    const version = await this.#flows.getVersion(flowVersionId);
    if (version?.bundle == null) {
      throw new FlowboxError(
        'FLOW_VERSION_NOT_FOUND',
        `flow version ${flowVersionId} has no published bundle`,
      );
    }
    const { bundle } = version;
    // Once per flow version: every job of it then reads the answer from this entry.
    const pieces = await Promise.all(bundle.pieces.map((ref) => this.#pieceRecord(ref)));
    const isolation = flowIsolation(pieces, this.#config.TRUSTED_PIECES);
    const traits = pauseTraits(version.definition);
    const published = { bundle, connections: version.connections, isolation, traits };
    this.#bundles.set(flowVersionId, published);
    return published;
  }

  async #pieceRecord(ref: PieceRef): Promise<PieceRecord> {
    const id = `${ref.name}@${ref.version}`;
    let record = this.#pieceArchives.get(id);
    if (record === undefined) {
      record = (await this.#pieces.get(ref.name, ref.version)) ?? undefined;
      if (record !== undefined) this.#pieceArchives.set(id, record);
    }
    if (record === undefined) throw new FlowboxError('PROVISION_FAILED', `piece ${id} is not published`);
    return record;
  }

  async #pieceDownload(ref: PieceRef, ttlSeconds: number): Promise<PieceDownload> {
    const record = await this.#pieceRecord(ref);
    return {
      name: record.name,
      version: record.version,
      url: await this.#downloads.url(record.archiveKey, ttlSeconds),
      sha256: record.sha256,
      sizeBytes: record.sizeBytes,
    };
  }
}

interface PublishedVersion {
  bundle: FlowBundleRecord;
  connections: string[];
  /** What the version's pieces allow (flow-isolation.ts), with this app's TRUSTED_PIECES. */
  isolation: RunIsolation;
  /** Whether its runs can pause, and whether it has wait steps. */
  traits: PauseTraits;
}

/** What a resume's dispatch reads of its run (run-waits.ts readResumeState). */
export interface ResumeStates {
  read(runId: string): Promise<ResumeState>;
  /** A resume dispatched `lateMs` past its earliest due timer (the metric). */
  dispatched?(lateMs: number): void;
}

export interface ConcludeOptions {
  /** Lease the next waiting job in the same Redis call (see LeasedJob.complete). */
  fetchNext: boolean;
  /** The worker's job span, from its result; the `run.finish` span's parent when traced. */
  traceparent?: string | undefined;
}

const attemptOf = (data: RunJobData, attempt: number): RunAttempt => ({
  runId: data.runId,
  flowId: data.flowId,
  syncInstanceId: data.syncInstanceId,
  attempt,
});

/** Why a run's job does not start its run, for the log line of the job dropped. */
function staleJobMessage(data: RunJobData, started: 'ended' | 'paused' | 'superseded'): string {
  const job = data.resume === undefined ? 'its first start' : `resume ${data.resume}`;
  switch (started) {
    case 'ended':
      return `run ${data.runId} has already ended; not running it again (a job for ${job})`;
    case 'paused':
      return `run ${data.runId} is paused at another pause; a stale job for ${job} is not run (its pause has its own resume)`;
    case 'superseded':
      return `run ${data.runId} waits to run a later resume; a stale job for ${job} is not run`;
  }
}
