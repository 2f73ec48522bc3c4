import { BENCHMARK_FLOW } from '@flowbox/protocol';
import type { z } from 'zod';
import type { ErrorView } from './views/error-view.ts';
import type { FlowVersionView, FlowView } from './views/flow-view.ts';
import type { ReadyView } from './views/health-view.ts';
import type { PieceVersionView } from './views/piece-view.ts';
import type { RunStatsView } from './views/run-stats-view.ts';
import type { RunSummaryView, RunView } from './views/run-view.ts';

/**
 * One example per operation, typed by the views so they cannot drift from them; redocly and
 * openapi.test.ts also check them against the generated schemas.
 */
const RUN_ID = '0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90';
const RERUN_ID = '7d2a9f40-1c3b-4e8d-b6a1-2f9e0c4d5b67';
const AT = '2026-11-25T18:00:00.000Z';

export const FLOW_EXAMPLE: FlowView = {
  id: 'orders',
  name: 'New orders',
  enabled: true,
  publishedVersionId: 'orders-v1',
  trigger: { piece: 'webhook', trigger: 'catch_webhook', input: {} },
  createdAt: AT,
  updatedAt: AT,
};

export const VERSION_EXAMPLE: FlowVersionView = {
  id: 'orders-v1',
  flowId: 'orders',
  number: 1,
  definition: BENCHMARK_FLOW,
  published: true,
  bundle: {
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    sizeBytes: 2048,
    pieces: [],
  },
  createdAt: AT,
  publishedAt: AT,
};

export const RUN_SUMMARY_EXAMPLE: RunSummaryView = {
  id: RUN_ID,
  flowId: 'orders',
  flowVersionId: 'orders-v1',
  status: 'SUCCEEDED',
  sync: false,
  error: null,
  logKey: `runs/orders/${RUN_ID}.json`,
  logError: null,
  timings: {
    queueMs: 3,
    provisionMs: 1,
    bootMs: 0,
    runMs: 12,
    logPersistMs: 4,
    workerBusyMs: 18,
    totalMs: 22,
  },
  provisioning: {
    bundle: 'hit',
    pieceHits: 2,
    pieceMisses: 0,
    engine: { pid: 4242, jobsServed: 7, preBooted: true },
  },
  isolation: 'isolate',
  workerId: 'worker-1',
  attempts: 1,
  createdAt: AT,
  startedAt: '2026-11-25T18:00:00.003Z',
  finishedAt: '2026-11-25T18:00:00.022Z',
  rerunOf: null,
  source: 'webhook',
  resumes: 0,
  pausedAt: null,
};

export const RUN_EXAMPLE: RunView = {
  ...RUN_SUMMARY_EXAMPLE,
  steps: [
    {
      name: 'trigger',
      kind: 'webhook/catch_webhook',
      status: 'SUCCEEDED',
      input: { a: 1 },
      output: { a: 1 },
      startedAt: '2026-11-25T18:00:00.004Z',
      durationMs: 1,
    },
  ],
  reruns: [RERUN_ID],
  causedBy: null,
  errorRun: null,
  errorFlowSkipped: null,
  waits: [],
  logUrl: `http://127.0.0.1:7070/flowbox/runs/orders/${RUN_ID}.json?X-Amz-Expires=900`,
};

export const RUN_STATS_EXAMPLE: RunStatsView = {
  now: '2026-11-25T18:00:10.000Z',
  windowSeconds: 10,
  bucketSeconds: 5,
  buckets: [
    { start: AT, succeeded: 40, failed: 1, inFlight: 0, p50Ms: 21, p95Ms: 35, p99Ms: 48 },
    {
      start: '2026-11-25T18:00:05.000Z',
      succeeded: 0,
      failed: 0,
      inFlight: 2,
      p50Ms: null,
      p95Ms: null,
      p99Ms: null,
    },
  ],
  total: { succeeded: 40, failed: 1, inFlight: 2, p50Ms: 21, p95Ms: 35, p99Ms: 48 },
};

export const READY_EXAMPLE: z.infer<typeof ReadyView> = {
  status: 'ok',
  database: 'ok',
  redis: 'ok',
  workers: 2,
};

export const PIECE_VERSION_EXAMPLE: PieceVersionView = {
  name: 'greeter',
  version: '1.0.0',
  sha256: 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c',
  sizeBytes: 562,
  publishedAt: AT,
  actions: [
    {
      name: 'greet',
      description: 'Greets someone.',
      inputSchema: {
        type: 'object',
        properties: { who: { type: 'string', minLength: 1 } },
        required: ['who'],
      },
    },
  ],
  triggers: [],
  nodeBuiltins: [],
  isolate: { supported: true },
  yankedAt: null,
};

export const errorExample = (code: ErrorView['error']['code'], message: string): ErrorView => ({
  error: { code, message },
});

export const EXAMPLE_IDS = { RUN_ID, RERUN_ID };
