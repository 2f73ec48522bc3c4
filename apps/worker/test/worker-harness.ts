import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeAppServer, SEEDED_FLOW, startFakeAppServer } from '@flowbox/engine/testing';
import { type Deferred, defer, type Logger } from '@flowbox/node-kit';
import {
  type ArtifactDownload,
  DEFAULT_FETCH_LIMITS,
  type DispatchedJob,
  type EgressPolicy,
  type ExecutionMode,
  type FlowDefinition,
  type PieceDownload,
  type RunLimits,
  walkSteps,
} from '@flowbox/protocol';
import type { Tracer } from '@flowbox/tracing';
import { expect } from 'vitest';
import { createColdEngineSupply } from '../src/engines/cold-engine-supply.ts';
import { isolatedVmPackageDir } from '../src/engines/engine-install.ts';
import type { EngineProcess } from '../src/engines/engine-process.ts';
import type { EngineSupply, StartEngine } from '../src/engines/engine-supply.ts';
import { createProvisioner, type Provisioner } from '../src/engines/provisioner.ts';
import { createWarmEngineSupply } from '../src/engines/warm-engine-supply.ts';
import { defaultEngineBundle, runIsolationOfSandbox, type SandboxConfig } from '../src/env.ts';
import { createJobRunner, type JobRunner } from '../src/jobs/job-runner.ts';
import { processExists, silentLogger } from '../src/test-helpers.ts';
import { engineStarter } from '../src/worker.ts';
import {
  buildFlowBundle,
  countingFetch,
  createTestArtifactStore,
  type TestArtifactStore,
} from './artifact-store.ts';
import { forwardOverHttp } from './http-callbacks.ts';
import { builtPieceArchives } from './piece-archives.ts';

/**
 * A job runner wired as in production (provisioner on a fresh cache dir, the built engine
 * installed and forked from it, a warm or cold supply), against a fake app for the engine's
 * callbacks and the shared versitygw for artifacts.
 */
export interface WorkerHarness {
  app: FakeAppServer;
  runner: JobRunner;
  provisioner: Provisioner;
  store: TestArtifactStore;
  cacheDir: string;
  /** Paths of every artifact request the provisioner made. */
  requests: string[];
  /** Every engine booted so far, in order. */
  booted: EngineProcess[];
  /** Resolves with the next engine to finish booting (or the one already booted after `count`). */
  bootedEngine(index: number): Promise<EngineProcess>;
  /** A job for `flow` (the seeded flow by default), its bundle published under a version of its own. */
  job(
    runId: string,
    overrides?: { flow?: FlowDefinition; limits?: Partial<RunLimits> },
  ): Promise<DispatchedJob>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  sandbox: SandboxConfig;
  executionMode?: ExecutionMode;
  /** EGRESS as parsed; `public` unless a test names its own hosts. */
  egress?: EgressPolicy;
  logger?: Logger;
  readRss?: (pid: number) => Promise<number | undefined>;
  /** Traces the jobs that carry a traceparent; none by default. */
  tracer?: Tracer;
  /** ISOLATE_MAX_RUNS, with `sandbox.isolate`; the engine's default if absent. */
  isolateMaxRuns?: number;
  /** ENGINE_CPU_PROF_DIR and the worker id its profiles are named for; none by default. */
  engineCpuProf?: { dir: string; workerId: string };
}

export async function startWorkerHarness(options: HarnessOptions): Promise<WorkerHarness> {
  const logger = options.logger ?? silentLogger();
  const archives = await builtPieceArchives();
  const app = await startFakeAppServer();
  const store = await createTestArtifactStore();
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'flowbox-worker-cache-'));
  const counter = countingFetch();
  const provisioner = createProvisioner({
    cacheDir,
    engineBundle: defaultEngineBundle(),
    isolatedVmDir: isolatedVmPackageDir(),
    fetch: counter.fetch,
  });

  const booted: EngineProcess[] = [];
  const bootWaiters: Deferred<EngineProcess>[] = [];
  const waiter = (index: number) => {
    for (let i = bootWaiters.length; i <= index; i += 1) bootWaiters.push(defer());
    return bootWaiters[index] as Deferred<EngineProcess>;
  };
  const start = engineStarter(
    provisioner,
    logger,
    options.executionMode ?? 'SANDBOX_CODE_ONLY',
    options.engineCpuProf ?? null,
  );
  const recordingStart: StartEngine = async (startOptions) => {
    const engine = await start(startOptions);
    waiter(booted.length).resolve(engine);
    booted.push(engine);
    return engine;
  };
  const { sandbox } = options;
  const engines: EngineSupply = sandbox.reuse
    ? createWarmEngineSupply({
        start: recordingStart,
        logger,
        maxJobs: sandbox.maxJobs,
        maxRssBytes: sandbox.maxRssBytes,
        readRss: options.readRss,
      })
    : createColdEngineSupply({ start: recordingStart, logger, prewarm: sandbox.prewarm });
  const freshEngines =
    sandbox.reuse && sandbox.isolate !== undefined
      ? createColdEngineSupply({ start: recordingStart, logger, prewarm: sandbox.isolate.prewarm })
      : undefined;
  const runner = createJobRunner({
    appUrl: app.url,
    workerId: 'worker-test',
    executionMode: options.executionMode ?? 'SANDBOX_CODE_ONLY',
    isolation: runIsolationOfSandbox(sandbox),
    freshEngines,
    ...(options.isolateMaxRuns === undefined ? {} : { isolateMaxRuns: options.isolateMaxRuns }),
    egress: options.egress ?? { allowPublic: true, named: [] },
    fetchLimits: DEFAULT_FETCH_LIMITS,
    logger,
    provisioner,
    engines,
    tracer: options.tracer ?? null,
    forwardCallback: forwardOverHttp(app.url),
  });
  engines.start();

  const pieces: PieceDownload[] = [];
  for (const archive of archives) pieces.push(await store.publishPiece(archive));
  const bundles = new Map<string, { flowId: string; flowVersionId: string; bundle: ArtifactDownload }>();
  const publish = async (flow: FlowDefinition) => {
    const flowVersionId = `fv-${createHash('sha256').update(JSON.stringify(flow)).digest('hex').slice(0, 12)}`;
    const known = bundles.get(flowVersionId);
    if (known !== undefined) return known;
    const bundle = buildFlowBundle(
      flowVersionId,
      flow,
      archives.map((a) => a.manifest),
    );
    const published = { flowId: bundle.flowId, flowVersionId, bundle: await store.publishBundle(bundle) };
    bundles.set(flowVersionId, published);
    return published;
  };

  return {
    app,
    runner,
    provisioner,
    store,
    cacheDir,
    requests: counter.requests,
    booted,
    bootedEngine: (index) => waiter(index).promise,
    async job(runId, overrides = {}) {
      const flow = overrides.flow ?? SEEDED_FLOW;
      const published = await publish(flow);
      const usedPieces = pieces.filter(
        (p) =>
          p.name === flow.trigger.piece ||
          walkSteps(flow).some(({ step: s }) => s.type === 'piece' && s.piece === p.name),
      );
      return {
        jobId: `job-${runId}`,
        runId,
        ...published,
        pieces: usedPieces,
        trigger: {
          method: 'POST',
          body: { hello: 'world' },
          rawBody: null,
          rawBodyEncoding: 'utf8',
          headers: { 'content-type': 'application/json' },
          query: {},
        },
        engineToken: `engine-token-${runId}`,
        logUpload: {
          url: app.logUploadUrl(`runs/${runId}.json`),
          fields: { key: `runs/${runId}.json` },
          key: `runs/${runId}.json`,
          maxBytes: 1_000_000,
        },
        limits: {
          flowTimeoutMs: 30_000,
          codeStepTimeoutMs: 5_000,
          codeStepMemoryMb: 32,
          ...overrides.limits,
        },
        acceptedAt: Date.now(),
      };
    },
    async close() {
      await runner.close();
      await app.close();
      store.close();
      await rm(cacheDir, { recursive: true, force: true });
      // No engine may outlive its test, spares included.
      for (const engine of booted)
        expect(processExists(engine.pid), `engine ${engine.pid} leaked`).toBe(false);
    },
  };
}
