import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '@flowbox/node-kit';
import { FINAL_RUN_STATUSES } from '@flowbox/protocol';
import { inject } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { type AppConfig, loadConfig } from '../src/env.ts';

export const TEST_TOKEN_SECRET = 'test-secret-test-secret-test-secret!';
export const TEST_API_KEY = 'test-api-key-0123456789';

/** The config of an in-process app on a fresh database, bucket and Redis namespace of the shared test servers. */
export async function testAppConfig(env: Record<string, string> = {}): Promise<AppConfig> {
  const s3 = inject('s3');
  return loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: await createTestDatabase(),
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: testNamespace(),
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: await createTestBucket(),
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    TOKEN_SECRET: TEST_TOKEN_SECRET,
    API_KEY: TEST_API_KEY,
    WORKER_POLL_SECONDS: '2',
    SEED_BENCHMARK_FLOW: 'true',
    ...env,
  });
}

/** An in-process app, started (all start steps) on a fresh database, bucket and Redis namespace. */
export async function startTestApp(
  env: Record<string, string> = {},
): Promise<{ app: FlowboxApp; url: string; config: AppConfig }> {
  const config = await testAppConfig(env);
  const app = await createApp(config, createLogger({ name: 'app', level: 'silent' }));
  const url = await startApp(app, { seedBenchmarkFlow: config.SEED_BENCHMARK_FLOW });
  return { app, url, config };
}

export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** `GET /v1/runs/:id` as a test reads it. */
export interface RunView {
  id: string;
  status: string;
  flowId: string;
  flowVersionId: string;
  sync: boolean;
  steps: Array<{
    name: string;
    path?: string;
    status: string;
    output?: unknown;
    error?: { code: string; message: string };
    skipReason?: string;
    /** A resumed run's step that ran before its pause. */
    replayed?: true;
    waitingFor?: string;
  }>;
  error: { code: string; message: string; step?: string } | null;
  logKey: string | null;
  logUrl: string | null;
  logError: { code: string; message: string } | null;
  workerId: string | null;
  attempts: number;
  timings: Record<string, number> | null;
  provisioning: {
    bundle: string;
    pieceHits: number;
    pieceMisses: number;
    engine: { pid: number; jobsServed: number; preBooted: boolean };
  } | null;
  /** `isolate`, `process` or `shared`; null until a worker reported the run. */
  isolation: string | null;
  rerunOf: string | null;
  reruns: string[];
  /** What started the run: webhook, schedule, manual or rerun. */
  source: string;
  /** For a run of an error flow: the failed run it reports. */
  causedBy: string | null;
  /** The error flow run this failed run started. */
  errorRun: string | null;
  /** Why this failed run's error flow could not start. */
  errorFlowSkipped: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Resumes after a pause, and when it paused (null unless PAUSED). */
  resumes: number;
  pausedAt: string | null;
  /** A PAUSED run's waiting points. */
  waits: Array<{
    path: string;
    kind: string;
    resumeAt: string | null;
    timeoutAt: string | null;
    childRunId: string | null;
    answered: boolean;
  }>;
}

/** Calls the management API with the test API key. */
export function manage(baseUrl: string, method: string, path: string, body?: unknown, apiKey = TEST_API_KEY) {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

export async function getRun(baseUrl: string, runId: string, apiKey = TEST_API_KEY): Promise<RunView> {
  const response = await fetch(`${baseUrl}/v1/runs/${runId}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (response.status !== 200)
    throw new Error(`GET run ${runId}: ${response.status} ${await response.text()}`);
  return (await response.json()) as RunView;
}

/**
 * Reads a run (`read`, e.g. `() => getRun(url, runId)`) every 50 ms until it is final; a read
 * that fails counts as not final yet (an app may be restarting). Throws past `deadlineMs`,
 * saying what it last saw.
 */
export async function waitForFinalRun(
  read: () => Promise<RunView>,
  runId: string,
  deadlineMs = 20_000,
): Promise<RunView> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    let last: string;
    try {
      const run = await read();
      if ((FINAL_RUN_STATUSES as readonly string[]).includes(run.status)) return run;
      last = run.status;
    } catch (error) {
      last = `unreadable (${error instanceof Error ? error.message : String(error)})`;
    }
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${last} after ${deadlineMs} ms`);
    await delay(50);
  }
}

/**
 * A final run's log from its `logUrl`, once stored: the engine uploads it after the run's
 * outcome, so it may arrive a moment after the run is final. Throws past `deadlineMs`.
 */
export async function fetchRunLog(logUrl: string | null, deadlineMs = 10_000): Promise<Response> {
  if (logUrl === null) throw new Error('the run has no log URL');
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const response = await fetch(logUrl);
    if (response.status !== 404 || Date.now() > deadline) return response;
    await response.body?.cancel();
    await delay(50);
  }
}
