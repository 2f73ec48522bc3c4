import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PgbouncerServer, startPgbouncer } from '@flowbox/local-services';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { RUN_ID_HEADER } from '../../app/src/http/webhook-routes.ts';
import { getRun, postJson } from '../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../src/stack.ts';

/**
 * Postgres behind a real PgBouncer in transaction mode, as deployments that pool connections run
 * it: two apps and two workers under concurrent warm load, prepared statements off
 * (DATABASE_PREPARED_STATEMENTS=false). Every run must end SUCCEEDED with its record complete,
 * and every statement must have gone through the pooler.
 */
const REQUESTS = 120;
const CONCURRENCY = 8;

describe('Postgres behind PgBouncer in transaction mode', () => {
  let bouncer: PgbouncerServer;
  let stack: RunningStack;
  let dataDir: string;
  let database: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-pgbouncer-test-'));
    // A pool smaller than the apps' pools together, so server connections are really shared.
    bouncer = await startPgbouncer({
      postgresUrl: inject('postgresUrl'),
      poolSize: 4,
      pathEnv: process.env.PATH,
    });
    database = new URL(await createTestDatabase()).pathname.slice(1);
    stack = await startStack({
      dataDir,
      apps: 2,
      workers: 2,
      port: 0,
      logLevel: 'warn',
      databaseUrl: bouncer.urlFor(database),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket: await createTestBucket() },
      appEnv: {
        REDIS_PREFIX: testNamespace(),
        DATABASE_PREPARED_STATEMENTS: 'false',
        WORKER_POLL_SECONDS: '2',
      },
      baseEnv: process.env,
    });
  });

  afterAll(async () => {
    await stack?.close();
    await bouncer?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers every webhook under concurrent load, records every run, and pools every statement', async () => {
    const before = await bouncer.transactionsTo(database);
    const runIds: string[] = [];
    const answers: string[] = [];
    let next = 0;
    const caller = async (index: number) => {
      for (let i = next++; i < REQUESTS; i = next++) {
        const app = stack.appUrls[(index + i) % stack.appUrls.length] ?? '';
        const response = await postJson(`${app}/v1/webhooks/benchmark/sync`, {});
        answers.push(`${response.status} ${await response.text()}`);
        const runId = response.headers.get(RUN_ID_HEADER);
        if (runId !== null) runIds.push(runId);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, index) => caller(index)));

    expect(answers).toHaveLength(REQUESTS);
    expect(new Set(answers)).toEqual(new Set(['200 {"result":6}']));
    expect(runIds).toHaveLength(REQUESTS);
    // The final record is written after the answer: read each run until it has its timings.
    const url = stack.appUrls[1] ?? '';
    for (const runId of runIds) {
      let run = await getRun(url, runId, stack.apiKey);
      for (let tries = 0; run.status !== 'SUCCEEDED' && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        run = await getRun(url, runId, stack.apiKey);
      }
      expect(run.status, runId).toBe('SUCCEEDED');
      expect(run.steps.map((s) => s.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    }
    // Three statements per run at least (accept, start, finish), each its own transaction.
    const after = await bouncer.transactionsTo(database);
    expect(after - before).toBeGreaterThanOrEqual(REQUESTS * 3);
  });
});
