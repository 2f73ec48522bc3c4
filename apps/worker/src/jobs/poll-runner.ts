import type { Logger } from '@flowbox/node-kit';
import {
  type DispatchedPollJob,
  type EgressPolicy,
  type EnginePollJob,
  type FetchLimits,
  FlowboxError,
  forUsers,
  type PollOutcome,
  type PollResult,
  serializeError,
} from '@flowbox/protocol';
import type { EngineSupply } from '../engines/engine-supply.ts';
import type { Provisioner } from '../engines/provisioner.ts';

export interface PollRunnerOptions {
  workerId: string;
  egress: EgressPolicy;
  fetchLimits: FetchLimits;
  provisioner: Provisioner;
  /**
   * Where a poll gets its engine: the worker's own, or (RUN_ISOLATION=isolate) a fresh one, so a
   * piece's poll never runs in the realm of the engine that serves isolated runs.
   */
  engines: EngineSupply;
  logger: Logger;
}

/**
 * Runs a polling trigger's poll as a job: provision the flow's bundle and the trigger's piece,
 * take an engine, and ask it to poll, bounded by the flow timeout (the engine is killed past it).
 * Every failure is an outcome; nothing here throws.
 */
export function createPollRunner(options: PollRunnerOptions): {
  run(job: DispatchedPollJob): Promise<PollResult>;
} {
  const { engines, provisioner, logger } = options;

  const attempt = async (job: DispatchedPollJob): Promise<PollOutcome> => {
    let provisioned: Awaited<ReturnType<Provisioner['provision']>>;
    try {
      provisioned = await provisioner.provision(job);
    } catch (error) {
      return { type: 'error', error: forUsers(serializeError(error, 'PROVISION_FAILED')) };
    }
    let acquired: Awaited<ReturnType<EngineSupply['acquire']>>;
    try {
      acquired = await engines.acquire({ pieces: provisioned.pieces });
    } catch (error) {
      return { type: 'error', error: forUsers(serializeError(error, 'ENGINE_CRASHED')) };
    }
    const engineJob: EnginePollJob = {
      jobId: job.jobId,
      flowId: job.flowId,
      flowVersionId: job.flowVersionId,
      bundlePath: provisioned.bundlePath,
      pieces: provisioned.pieces,
      state: job.state,
      maxResultBytes: job.maxResultBytes,
      egress: options.egress,
      fetchLimits: options.fetchLimits,
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void acquired.engine.kill();
    }, job.timeoutMs);
    try {
      const { outcome } = await acquired.engine.poll(engineJob);
      await engines.release(acquired.engine, { reusable: true });
      return outcome;
    } catch (error) {
      await engines.release(acquired.engine, { reusable: false });
      if (timedOut) {
        const timeout = new FlowboxError(
          'FLOW_TIMEOUT',
          `the poll did not finish within ${job.timeoutMs} ms`,
        );
        return { type: 'error', error: serializeError(timeout) };
      }
      return { type: 'error', error: forUsers(serializeError(error, 'ENGINE_CRASHED')) };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    async run(job) {
      const started = performance.now();
      const outcome = await attempt(job);
      const pollMs = performance.now() - started;
      logger.info(
        {
          flowId: job.flowId,
          jobId: job.jobId,
          outcome: outcome.type,
          items: outcome.type === 'ok' ? outcome.items.length : undefined,
          errorCode: outcome.type === 'error' ? outcome.error.code : undefined,
          pollMs,
        },
        'poll finished',
      );
      return {
        version: 1,
        type: 'poll-result',
        workerId: options.workerId,
        jobId: job.jobId,
        flowVersionId: job.flowVersionId,
        outcome,
        pollMs,
      };
    },
  };
}
