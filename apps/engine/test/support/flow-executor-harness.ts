import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EngineJob,
  type FlowDefinition,
  FlowResponseReportSchema,
  StepReportSchema,
  type StepResult,
} from '@flowbox/protocol';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { CodeRunners } from '../../src/code-steps/code-runner.ts';
import { createIsolatedVmRunner } from '../../src/code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from '../../src/code-steps/node-vm-runner.ts';
import { createFlowBundleLoader } from '../../src/flows/flow-bundle-loader.ts';
import { createFlowExecutor, type FlowExecutor } from '../../src/flows/flow-executor.ts';
import type { Clock } from '../../src/flows/interpreter/interpreter-context.ts';
import { createHttpClient, type HttpClient } from '../../src/host/http-client.ts';
import { createRunIsolation, type RunIsolation } from '../../src/isolate/run-isolation.ts';
import { createPieceLoader } from '../../src/pieces/piece-loader.ts';
import { persistingExecutor } from './execute-then-persist.ts';
import {
  type FakeAppServer,
  makeEngineJob,
  prepareEngineArtifacts,
  type RecordedRequest,
  SEEDED_FLOW,
  startFakeAppServer,
} from './index.ts';

/**
 * The flow executor's tests' setup: a temp folder for what a worker would provision, and per
 * test a fake app, an HTTP client, both code runners and an executor, all closed after it.
 */
export function useExecutorHarness(options: { progressIntervalMs?: number; clock?: Clock } = {}) {
  let dir: string;
  let app: FakeAppServer;
  let http: HttpClient;
  let codeRunners: CodeRunners;
  let executor: FlowExecutor;
  let runIsolation: RunIsolation;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowbox-engine-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    app = await startFakeAppServer();
    http = createHttpClient();
    const isolated = createIsolatedVmRunner({ onCatastrophicError: () => {} });
    codeRunners = { SANDBOX_CODE_ONLY: isolated, SANDBOXED: isolated, UNSANDBOXED: createNodeVmRunner() };
    runIsolation = createRunIsolation({
      library: isolated.library,
      log: () => {},
      onCatastrophicError: () => {},
    });
    executor = createFlowExecutor({
      bundles: createFlowBundleLoader(),
      pieces: createPieceLoader(),
      codeRunners,
      http,
      log: () => {},
      runIsolation,
      ...options,
    });
  });
  afterEach(async () => {
    runIsolation.close();
    for (const runner of Object.values(codeRunners)) runner.close();
    http.close();
    await app.close();
  });

  const posts = (suffix: string): RecordedRequest[] =>
    app.requests.filter((r) => r.method === 'POST' && r.url === `/v1/engine/runs/run-1/${suffix}`);

  return {
    get dir() {
      return dir;
    },
    get app() {
      return app;
    },
    /** Each execution resolves once its log upload ended too (executeThenPersist). */
    get executor() {
      return persistingExecutor(executor);
    },
    /** RUN_ISOLATION=isolate's isolates; the engine calls `prepareNext` after each job. */
    get runIsolation() {
      return runIsolation;
    },
    /** A job for `flow`, with its bundle written and the built pieces unpacked, as a worker would. */
    async job(flow: FlowDefinition = SEEDED_FLOW, overrides: Partial<EngineJob> = {}): Promise<EngineJob> {
      const artifacts = await prepareEngineArtifacts(dir, flow);
      return makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), { ...artifacts, ...overrides });
    },
    posts,
    /** Every step the app heard of from the callbacks, in the order it heard them: progress, then response. */
    stepReports: (): StepResult[] =>
      app.requests.flatMap((r) => {
        if (r.method !== 'POST') return [];
        if (r.url.endsWith('/steps')) return StepReportSchema.parse(r.json).steps;
        if (r.url.endsWith('/response')) return FlowResponseReportSchema.parse(r.json).steps;
        return [];
      }),
  };
}

/** The seeded flow with its code step's code (or input) changed. */
export function withCodeStep(change: { code?: string; input?: Record<string, unknown> }): FlowDefinition {
  const flow = structuredClone(SEEDED_FLOW);
  const codeStep = flow.steps[1];
  if (codeStep?.type !== 'code') throw new Error('the seeded flow changed');
  Object.assign(codeStep, change);
  return flow;
}
