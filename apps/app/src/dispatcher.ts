import {
  type DispatchedJob,
  type FinalRunStatus,
  FlowboxError,
  type FlowDefinition,
  type JobTimings,
  type SerializedError,
} from '@flowbox/protocol';
import type { FlowsRepository } from './db/flows-repository.ts';
import type { RunsRepository } from './db/runs-repository.ts';
import type { AppConfig } from './env.ts';
import type { LeasedJob } from './queue/job-broker.ts';
import { RunLogStorage } from './run-log-storage.ts';
import type { SyncResponseHub } from './sync/sync-response-hub.ts';
import type { TokenService } from './tokens.ts';

/** Seconds an engine token and upload URL outlive the flow timeout, for the final callbacks. */
const TOKEN_GRACE_SECONDS = 60;

/**
 * Turns a leased job into what a worker needs (definition, scoped token, presigned upload) and
 * closes runs whose engine could not: a crash, a timeout, a worker that vanished.
 */
export class Dispatcher {
  readonly #flows: FlowsRepository;
  readonly #runs: RunsRepository;
  readonly #tokens: TokenService;
  readonly #storage: RunLogStorage;
  readonly #hub: SyncResponseHub;
  readonly #config: AppConfig;
  /** Flow versions are immutable, so their definitions are cached for the process's life. */
  readonly #definitions = new Map<string, FlowDefinition>();

  constructor(deps: {
    flows: FlowsRepository;
    runs: RunsRepository;
    tokens: TokenService;
    storage: RunLogStorage;
    hub: SyncResponseHub;
    config: AppConfig;
  }) {
    this.#flows = deps.flows;
    this.#runs = deps.runs;
    this.#tokens = deps.tokens;
    this.#storage = deps.storage;
    this.#hub = deps.hub;
    this.#config = deps.config;
  }

  async dispatch(lease: LeasedJob, workerId: string): Promise<DispatchedJob> {
    const { data } = lease;
    const flow = await this.#definition(data.flowVersionId);
    const flowTimeoutMs = this.#config.FLOW_TIMEOUT_SECONDS * 1000;
    const ttl = this.#config.FLOW_TIMEOUT_SECONDS + TOKEN_GRACE_SECONDS;
    const [engineToken, uploadUrl] = await Promise.all([
      this.#tokens.signEngineToken({ runId: data.runId, syncInstanceId: data.syncInstanceId }, ttl),
      this.#storage.presignLogUpload(data.runId, ttl),
    ]);
    await this.#runs.markRunning(data.runId, workerId);
    return {
      jobId: lease.jobId,
      runId: data.runId,
      flowId: data.flowId,
      flowVersionId: data.flowVersionId,
      flow,
      trigger: data.trigger,
      engineToken,
      logUpload: {
        url: uploadUrl,
        key: RunLogStorage.logKey(data.runId),
        maxBytes: this.#config.RUN_LOG_MAX_BYTES,
      },
      limits: {
        flowTimeoutMs,
        codeStepTimeoutMs: this.#config.CODE_STEP_TIMEOUT_MS,
        codeStepMemoryMb: this.#config.CODE_STEP_MEMORY_MB,
      },
      acceptedAt: data.acceptedAt,
    };
  }

  /**
   * Records a worker's verdict. The engine normally finalised the run already through its
   * `finish` callback; when it could not (crash, timeout, lost worker) this does, and a sync
   * caller still waiting hears about it at once.
   */
  async conclude(
    lease: LeasedJob,
    outcome: { status: FinalRunStatus; error?: SerializedError | undefined; timings?: JobTimings },
  ): Promise<void> {
    const { runId, syncInstanceId } = lease.data;
    const finalised = await this.#runs.finish(runId, { status: outcome.status, error: outcome.error });
    if (outcome.timings !== undefined) await this.#runs.recordTimings(runId, outcome.timings);
    if (finalised && syncInstanceId !== null) {
      await this.#hub.publish(syncInstanceId, {
        version: 1,
        type: 'run-ended',
        runId,
        status: outcome.status,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      });
    }
    if (outcome.status === 'SUCCEEDED') await lease.complete();
    else await lease.fail(outcome.error?.message ?? outcome.status);
  }

  async #definition(flowVersionId: string): Promise<FlowDefinition> {
    const cached = this.#definitions.get(flowVersionId);
    if (cached !== undefined) return cached;
    const definition = await this.#flows.getDefinition(flowVersionId);
    if (definition === null)
      throw new FlowboxError('FLOW_NOT_FOUND', `flow version ${flowVersionId} not found`);
    this.#definitions.set(flowVersionId, definition);
    return definition;
  }
}
