// Shared by the fault-injection suite: a real stack per test file, the faults piece,
// load generation and waiting for runs to be final.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { LogLine } from '@flowbox/local-services';
import type { FlowDefinition } from '@flowbox/protocol';
import { inject } from 'vitest';
import {
  createBucket,
  defaultToolsDir,
  findVersitygw,
  type RedisCluster,
  type RedisServer,
  startRedisCluster,
  startRedisServer,
  startVersitygw,
  type VersitygwServer,
} from '../../../../packages/local-services/src/index.ts';
import { buildPieceArchive } from '../../../../scripts/build/piece-archive.ts';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../../test/fixtures.ts';
import { RUN_ID_HEADER } from '../../../app/src/http/webhook-routes.ts';
import { getRun, manage, type RunView, waitForFinalRun } from '../../../app/test/app-harness.ts';
import { type RunningStack, type SupervisionOptions, startStack } from '../../src/stack.ts';
import { type Beacon, startBeacon } from './beacon.ts';
import { killQuietly, processesUnder } from './processes.ts';
import { type S3Gate, startS3Gate } from './s3-gate.ts';

const FIXTURE_PIECE_DIR = join(import.meta.dirname, 'fixtures', 'piece-faults');

export interface FaultStackOptions {
  apps?: number;
  workers?: number;
  workerTargets?: number[];
  appEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  /**
   * `private`: a redis-server of this stack alone (append-only, so a restart keeps the queue).
   * `cluster`: a Redis Cluster of this stack alone (three primaries, a replica each).
   */
  redis?: 'shared' | 'private' | 'cluster';
  /** With `redis: 'private'`: false starts it without persistence, so a restart comes back empty. */
  redisAppendOnly?: boolean;
  /** `private`: a versitygw of this stack alone, which the test may stop, start and freeze. */
  s3?: 'shared' | 'private';
  /** Put a gate the test opens and closes for log uploads in front of S3 (s3-gate.ts). */
  s3Gate?: boolean;
  /** Flows to create and publish once the stack is up, by id. */
  flows?: Record<string, FlowDefinition>;
  /** Restart processes that die, as `pnpm dev` does (a restarted app comes back on its port). */
  supervise?: SupervisionOptions;
  /** Print the processes' warnings and errors (for debugging a failing test). */
  verbose?: boolean;
}

export interface FaultStack {
  stack: RunningStack;
  /** The first app's base URL. */
  url: string;
  /** The test's own database on the shared Postgres. */
  databaseName: string;
  databaseUrl: string;
  /** Set with `redis: 'private'`. */
  redis: RedisServer | undefined;
  /** Set with `redis: 'cluster'`. */
  redisCluster: RedisCluster | undefined;
  /** Set with `s3: 'private'`. */
  s3: VersitygwServer | undefined;
  /** Set with `s3Gate`: every process of the stack reaches S3 through it. */
  s3Gate: S3Gate | undefined;
  /** Where the faults piece reports its checkpoints. */
  beacon: Beacon;
  /** Holds the worker caches: every engine of this stack runs a file under it. */
  dataDir: string;
  /** Log lines of every process, newest last (bounded). */
  lines: Array<{ name: string; line: LogLine }>;
  getRun(runId: string): Promise<RunView>;
  /** Stops every process and private server; leaves no engine behind (it checks). */
  close(): Promise<void>;
}

/**
 * A real app/worker/engine stack on the shared Postgres (a fresh database), with the shared or a
 * private Redis and S3, and the faults piece published through the registry (POST /v1/pieces).
 */
export async function startFaultStack(options: FaultStackOptions = {}): Promise<FaultStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'flowbox-faults-'));
  const cleanups: Array<() => Promise<void>> = [async () => rm(dataDir, { recursive: true, force: true })];
  const runCleanups = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  try {
    const piecesDir = join(dataDir, 'pieces');
    await buildPieceArchive(FIXTURE_PIECE_DIR, join(piecesDir, 'faults'));
    const beacon = await startBeacon();
    cleanups.push(() => beacon.close());

    let redis: RedisServer | undefined;
    if (options.redis === 'private') {
      redis = await startRedisServer({ appendOnly: options.redisAppendOnly ?? true });
      cleanups.push(() => redis?.close() ?? Promise.resolve());
    }
    let redisCluster: RedisCluster | undefined;
    if (options.redis === 'cluster') {
      redisCluster = await startRedisCluster();
      cleanups.push(() => redisCluster?.close() ?? Promise.resolve());
    }
    const sharedS3 = inject('s3');
    let s3Server: VersitygwServer | undefined;
    let s3 = { ...sharedS3, bucket: '' };
    if (options.s3 === 'private') {
      const binary = findVersitygw({ pathEnv: process.env.PATH, toolsDir: defaultToolsDir() });
      if (binary === null) throw new Error('versitygw is missing: run `node scripts/check-test-tools.ts`');
      const credentials = { accessKeyId: 'flowbox-faults', secretAccessKey: randomUUID() };
      s3Server = await startVersitygw({ dataDir: join(dataDir, 's3'), binary, ...credentials });
      cleanups.push(() => s3Server?.close() ?? Promise.resolve());
      s3 = { endpoint: s3Server.endpoint, region: s3Server.region, ...credentials, bucket: 'flowbox' };
      await createBucket(s3, s3.bucket);
    } else {
      s3.bucket = await createTestBucket();
    }

    let s3Gate: S3Gate | undefined;
    if (options.s3Gate === true) {
      const gate = await startS3Gate(s3.endpoint);
      s3Gate = gate;
      cleanups.push(() => gate.close());
      s3 = { ...s3, endpoint: gate.url };
    }

    const databaseUrl = await createTestDatabase();
    const lines: Array<{ name: string; line: LogLine }> = [];
    const stack = await startStack({
      dataDir: join(dataDir, 'stack'),
      apps: options.apps ?? 1,
      workers: options.workers ?? 1,
      workerTargets: options.workerTargets,
      port: 0,
      logLevel: 'info',
      databaseUrl,
      redisUrl: redis?.url ?? redisCluster?.url ?? inject('redisUrl'),
      s3,
      appEnv: {
        REDIS_PREFIX: testNamespace(),
        WORKER_POLL_SECONDS: '2',
        ...options.appEnv,
      },
      workerEnv: { ...options.workerEnv },
      workerEnvAt: (index) => ({ CACHE_DIR: join(dataDir, `cache-${index}`) }),
      onLine: (name, line) => {
        lines.push({ name, line });
        if (lines.length > 5_000) lines.splice(0, 1_000);
        const level = Number(line.json?.level ?? 50);
        if (options.verbose === true && level >= 40) console.log(name, line.raw.slice(0, 2_000));
      },
      baseEnv: process.env,
      ...(options.supervise === undefined ? {} : { supervise: options.supervise }),
    });
    const url = stack.appUrls[0] ?? '';
    const faultsPiece = {
      manifest: JSON.parse(await readFile(join(piecesDir, 'faults', 'manifest.json'), 'utf8')) as unknown,
      archive: (await readFile(join(piecesDir, 'faults', 'piece.tgz'))).toString('base64'),
    };
    const published = await manage(url, 'POST', '/v1/pieces', faultsPiece, stack.apiKey);
    if (published.status !== 201) {
      throw new Error(`publishing the faults piece: ${published.status} ${await published.text()}`);
    }
    for (const [id, definition] of Object.entries(options.flows ?? {})) {
      const created = await manage(
        url,
        'POST',
        '/v1/flows',
        { id, name: id, definition, publish: true },
        stack.apiKey,
      );
      if (created.status !== 201)
        throw new Error(`creating flow ${id}: ${created.status} ${await created.text()}`);
    }
    // Closed first (before the servers it uses); then nothing may be left running under dataDir.
    cleanups.push(async () => {
      await stack.close();
      const left = processesUnder(dataDir);
      for (const pid of left) killQuietly(pid);
      if (left.length > 0) throw new Error(`engines outlived their stack: ${left.join(', ')}`);
    });
    return {
      stack,
      url,
      databaseName: decodeURIComponent(new URL(databaseUrl).pathname.slice(1)),
      databaseUrl,
      redis,
      redisCluster,
      s3: s3Server,
      s3Gate,
      beacon,
      dataDir,
      lines,
      getRun: (runId) => getRun(url, runId, stack.apiKey),
      close: runCleanups,
    };
  } catch (error) {
    await runCleanups();
    throw error;
  }
}

// ---- flows ----------------------------------------------------------------------------------

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} } as const;
const RESPOND = (body: string) =>
  ({
    type: 'piece',
    name: 'respond',
    piece: 'webhook',
    action: 'return_response',
    input: { status: 200, headers: {}, body },
  }) as const;

/** One faults-piece step (inputs from the webhook body: `{{trigger.url}}` and the like), then a response. */
export function faultsFlow(
  action: 'checkpoint' | 'exit' | 'throw_uncaught' | 'attempt' | 'remember' | 'hoard',
  input: Record<string, unknown>,
) {
  return {
    trigger: TRIGGER,
    steps: [{ type: 'piece', name: 'fault', piece: 'faults', action, input }, RESPOND('{{fault}}')],
  } as unknown as FlowDefinition;
}

/** A checkpoint that reports to the beacon and holds for the webhook body's `holdMs`. */
export const HOLD_FLOW = faultsFlow('checkpoint', { url: '{{trigger.url}}', holdMs: '{{trigger.holdMs}}' });

/** One code step, then a response with its result. */
export function codeFlow(code: string): FlowDefinition {
  return {
    trigger: TRIGGER,
    steps: [{ type: 'code', name: 'code', code, input: {} }, RESPOND('{{code}}')],
  } as unknown as FlowDefinition;
}

// ---- webhooks and runs ----------------------------------------------------------------------

export interface WebhookAnswer {
  status: number;
  runId: string | null;
  body: unknown;
  ms: number;
  /** The `retry-after` header, when the answer had one. */
  retryAfter: string | null;
}

/** POSTs a webhook and reads the answer; a request still unanswered after `timeoutMs` throws. */
export async function postWebhook(
  url: string,
  flowId: string,
  body: Record<string, unknown> = {},
  options: { sync?: boolean; timeoutMs?: number } = {},
): Promise<WebhookAnswer> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/webhooks/${flowId}${options.sync === false ? '' : '/sync'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  const runId = response.headers.get(RUN_ID_HEADER) ?? (parsed as { runId?: string } | null)?.runId ?? null;
  return {
    status: response.status,
    runId,
    body: parsed,
    ms: performance.now() - started,
    retryAfter: response.headers.get('retry-after'),
  };
}

/** Polls `GET /v1/runs/:id` until the run is final; throws past `deadlineMs`. */
export function waitForFinal(fault: FaultStack, runId: string, deadlineMs = 30_000): Promise<RunView> {
  return waitForFinalRun(() => fault.getRun(runId), runId, deadlineMs);
}

/** Waits for every run to be final; returns them by id. */
export async function waitForAllFinal(
  fault: FaultStack,
  runIds: readonly string[],
  deadlineMs: number,
): Promise<Map<string, RunView>> {
  const deadline = Date.now() + deadlineMs;
  const final = new Map<string, RunView>();
  for (const runId of runIds) {
    final.set(runId, await waitForFinal(fault, runId, Math.max(1_000, deadline - Date.now())));
  }
  return final;
}

/** Counts runs by status (and error code). */
export function tally(runs: Iterable<RunView>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) {
    const key = run.error === null ? run.status : `${run.status} ${run.error.code}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export interface LoadResult {
  answers: WebhookAnswer[];
  /** Requests that threw (no answer within their timeout, or a refused connection). */
  failures: Array<{ error: string; ms: number }>;
}

/**
 * Keeps `concurrency` webhook callers busy until `stop()`; every request has its own deadline,
 * so a hang shows up as a failure instead of stalling the test.
 */
export function startLoad(options: {
  /** A function: asked before every request (a load balancer's choice). */
  url: string | (() => string);
  flowId: string;
  concurrency: number;
  sync?: boolean;
  requestTimeoutMs?: number;
  body?: Record<string, unknown>;
  /** Called after every answer (e.g. to inject a fault after the n-th one). */
  onAnswer?: (answer: WebhookAnswer, total: number) => void;
}) {
  const result: LoadResult = { answers: [], failures: [] };
  let stopped = false;
  const caller = async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const url = typeof options.url === 'string' ? options.url : options.url();
        const answer = await postWebhook(url, options.flowId, options.body ?? {}, {
          sync: options.sync ?? false,
          timeoutMs: options.requestTimeoutMs ?? 10_000,
        });
        result.answers.push(answer);
        options.onAnswer?.(answer, result.answers.length);
      } catch (error) {
        result.failures.push({ error: String(error), ms: performance.now() - started });
        await delay(20);
      }
    }
  };
  const callers = Array.from({ length: options.concurrency }, caller);
  return {
    result,
    async stop(): Promise<LoadResult> {
      stopped = true;
      await Promise.all(callers);
      return result;
    },
  };
}

export { waitUntil } from '../../../../test/wait.ts';
export type { Beacon, Checkpoint } from './beacon.ts';
// Process inspection (/proc) lives in processes.ts; the tests import it from here too.
export * from './processes.ts';

/** Seconds with one decimal, for the figures the tests print. */
export function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** One line of figures per test, collected in the test output (and quoted in the report). */
export function report(row: string, figures: Record<string, unknown>): void {
  console.log(`[faults] ${row}: ${JSON.stringify(figures)}`);
}
