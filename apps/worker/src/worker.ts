import { rm } from 'node:fs/promises';
import { AddressClassifier, CODE_STEP_FETCH_LIMITS, createEgressFetch } from '@flowbox/egress';
import type { Logger } from '@flowbox/node-kit';
import type { ExecutionMode } from '@flowbox/protocol';
import type { Tracer } from '@flowbox/tracing';
import { type AppConnection, createAppConnection } from './connection/app-connection.ts';
import { createColdEngineSupply } from './engines/cold-engine-supply.ts';
import { engineCpuProfFlags } from './engines/engine-cpu-prof.ts';
import { type InstalledEngine, isolatedVmPackageDir } from './engines/engine-install.ts';
import { ENGINE_NODE_FLAGS } from './engines/engine-node-flags.ts';
import { SPARE_NICENESS } from './engines/engine-priority.ts';
import { startEngineProcess } from './engines/engine-process.ts';
import type { EngineSupply, StartEngine } from './engines/engine-supply.ts';
import { createEngineRssReader } from './engines/process-rss.ts';
import { createProvisioner, type Provisioner } from './engines/provisioner.ts';
import { createWarmEngineSupply } from './engines/warm-engine-supply.ts';
import { runIsolationOfSandbox, type SandboxConfig, type WorkerConfig } from './env.ts';
import { createJobRunner, type JobRunner } from './jobs/job-runner.ts';
import { createPollRunner } from './jobs/poll-runner.ts';
import { type MetricsServer, startMetricsServer } from './metrics/metrics-server.ts';
import { WorkerMetrics } from './metrics/worker-metrics.ts';
import { DEFAULT_SANDBOX_LIMITS, pidNamespaceLauncher } from './sandbox/bubblewrap.ts';
import { prepareSandboxedEngine } from './sandbox/sandboxed-engine.ts';

export interface Worker {
  /** Starts the metrics server (when configured), the engine supply and the app connection. */
  start(): Promise<void>;
  /**
   * Stops polling, finishes and reports the job in progress, then stops its engines and removes
   * the cache when it is the worker's temporary one.
   */
  close(): Promise<void>;
}

/**
 * Starts engines from the copy installed in the cache, never the build output: from its startup
 * snapshot when there is one, else `engine.mjs` (apps/engine/README.md), with an environment of
 * only the compile cache (never the worker's token), in a PID namespace of their own unless
 * ENGINE_PID_NAMESPACE=false. SANDBOXED engines start in bubblewrap's full sandbox, with their
 * relay as their whole environment.
 */
export function engineStarter(
  provisioner: Provisioner,
  logger: Logger,
  mode: ExecutionMode,
  /** ENGINE_CPU_PROF_DIR and the worker's id (engine-cpu-prof.ts), or null: no profiles. */
  cpuProf: { dir: string; workerId: string } | null = null,
  /** ENGINE_MEMORY_LIMIT_MB, in bytes: the bound on each engine while it runs a job. */
  memoryLimitBytes?: number,
  /**
   * ENGINE_PID_NAMESPACE: engines start in a PID namespace of their own (bubblewrap.ts), which
   * keeps them from reading `hiddenFiles` (WORKER_TOKEN_FILE); null forks them beside the worker.
   */
  pidNamespace: { hiddenFiles: string[] } | null = { hiddenFiles: [] },
): StartEngine {
  const memoryLimit = memoryLimitBytes === undefined ? {} : { memoryLimitBytes };
  // Its ranges never change: one for every relay's egress, job after job.
  const classifier = new AddressClassifier();
  let reported: InstalledEngine | undefined;
  const launcher = pidNamespace === null ? undefined : pidNamespaceLauncher(pidNamespace.hiddenFiles);
  const cpuProfFlags = cpuProf === null ? undefined : engineCpuProfFlags(cpuProf.dir, cpuProf.workerId);
  return async (options = {}) => {
    const installed = await provisioner.engine();
    const { snapshot } = installed;
    if (snapshot !== undefined && reported !== installed) {
      reported = installed;
      if ('error' in snapshot) {
        logger.warn({ reason: snapshot.error }, 'no engine startup snapshot; engines start from engine.mjs');
      } else {
        logger.info({ blob: snapshot.blob }, 'engines start from a startup snapshot');
      }
    }
    const snapshotBlob = snapshot !== undefined && 'blob' in snapshot ? snapshot.blob : undefined;
    if (mode !== 'SANDBOXED') {
      return startEngineProcess({
        entry: installed.entry,
        snapshotBlob,
        logger,
        ...(options.spare === true ? { niceness: SPARE_NICENESS } : {}),
        execArgv: [...ENGINE_NODE_FLAGS, ...(cpuProfFlags === undefined ? [] : cpuProfFlags())],
        env: { NODE_COMPILE_CACHE: installed.compileCacheDir },
        ...(launcher === undefined ? {} : { launcher }),
        // A profile is written only by an engine that exits on its own.
        endGracefully: cpuProfFlags !== undefined,
        ...memoryLimit,
      });
    }
    const { sandbox, env } = await prepareSandboxedEngine({
      entry: installed.entry,
      snapshotBlob,
      isolatedVmDir: provisioner.isolatedVmDir,
      artifactDirs: provisioner.artifactDirs,
      viewsDir: provisioner.sandboxViewsDir,
      egressFetch: (policy, budget) =>
        createEgressFetch({ policy, limits: CODE_STEP_FETCH_LIMITS, budget, classifier }),
      limits: DEFAULT_SANDBOX_LIMITS,
      logger,
    });
    try {
      return await startEngineProcess({
        entry: installed.entry,
        snapshotBlob,
        logger,
        env,
        sandbox,
        ...memoryLimit,
      });
    } catch (error) {
      await sandbox.dispose();
      throw error;
    }
  };
}

export function createEngineSupply(sandbox: SandboxConfig, start: StartEngine, logger: Logger): EngineSupply {
  return sandbox.reuse
    ? createWarmEngineSupply({ start, logger, maxJobs: sandbox.maxJobs, maxRssBytes: sandbox.maxRssBytes })
    : createColdEngineSupply({ start, logger, prewarm: sandbox.prewarm });
}

/**
 * Builds a concurrency-1 worker: app connection → job runner → provisioner + engine supply.
 * `tracer`: null when tracing is off; the worker closes (flushes) it last.
 */
export function createWorker(config: WorkerConfig, logger: Logger, tracer: Tracer | null = null): Worker {
  const provisioner = createProvisioner({
    cacheDir: config.cacheDir,
    engineBundle: config.engineBundle,
    engineSnapshot: config.engineSnapshot,
    isolatedVmDir: isolatedVmPackageDir(),
  });
  const metrics = new WorkerMetrics();
  const startEngine = engineStarter(
    provisioner,
    logger,
    config.executionMode,
    config.engineCpuProfDir === null ? null : { dir: config.engineCpuProfDir, workerId: config.workerId },
    config.engineMemoryLimitBytes,
    config.enginePidNamespace
      ? { hiddenFiles: config.workerTokenFile === null ? [] : [config.workerTokenFile] }
      : null,
  );
  const countedStart: StartEngine = async (options) => {
    const engine = await startEngine(options);
    metrics.engineBooted(engine.bootMs);
    return engine;
  };
  const engines = createEngineSupply(config.sandbox, countedStart, logger);
  // Not started: a spare boots only once a job whose flow needs Node has come.
  const freshEngines =
    config.sandbox.reuse && config.sandbox.isolate !== undefined
      ? createColdEngineSupply({ start: countedStart, logger, prewarm: config.sandbox.isolate.prewarm })
      : undefined;
  const runner: JobRunner = createJobRunner({
    appUrl: config.appUrl,
    workerId: config.workerId,
    executionMode: config.executionMode,
    isolation: runIsolationOfSandbox(config.sandbox),
    freshEngines,
    isolateMaxRuns: config.isolateMaxRuns,
    egress: config.egress,
    fetchLimits: config.fetchLimits,
    logger,
    provisioner,
    engines,
    tracer,
    // The connection is made below; a callback comes only once it runs a job.
    forwardCallback: (callback) => connection.forwardCallback(callback),
    reportLogFailure: (failure) => connection.reportLogFailure(failure),
  });
  const polls = createPollRunner({
    workerId: config.workerId,
    egress: config.egress,
    fetchLimits: config.fetchLimits,
    provisioner,
    engines: freshEngines ?? engines,
    logger,
  });
  const connection: AppConnection = createAppConnection({
    appUrl: config.appUrl,
    token: config.workerToken,
    workerId: config.workerId,
    logger,
    pollAhead: config.pollAhead,
    beforeDisconnect: () => runner.logsSettled(),
    runJob: async (job) => {
      const result = await runner.run(job);
      metrics.jobFinished(result);
      return result;
    },
    runPoll: (job) => polls.run(job),
  });
  const readEngineRss = createEngineRssReader();
  metrics.readEngineRss(async () => {
    const pid = runner.enginePid;
    return pid === undefined ? undefined : readEngineRss(pid);
  });
  let metricsServer: MetricsServer | null = null;
  return {
    async start() {
      const { workerToken: _secret, ...shown } = config;
      logger.info(shown, 'worker starting');
      if (config.metrics !== null) {
        metricsServer = await startMetricsServer({ ...config.metrics, metrics, logger });
        logger.info({ url: metricsServer.url }, 'serving metrics');
      }
      engines.start();
      connection.start();
    },
    async close() {
      await connection.close();
      await runner.close();
      // After the engines have exited, which run from the cache. A CACHE_DIR someone set is kept.
      if (config.cacheDirTemporary) await rm(config.cacheDir, { recursive: true, force: true });
      await metricsServer?.close();
      await tracer?.close();
    },
  };
}
