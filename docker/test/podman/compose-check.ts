import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANSWERS_THEN_WORKS } from '../../../test/flows.ts';
import { ComposeStack, sleep } from './compose-stack.ts';
import { podman } from './podman.ts';
import { canRunContainers, ensureStandinImages } from './standin-images.ts';

/**
 * The compose stack for real: builds local stand-ins for the public images, builds the app and
 * worker images from docker/Dockerfile, brings docker/docker-compose.yml up with podman-compose
 * and drives it from the host through the published app port:
 *
 *   the benchmark webhook answers {"result":6}; the run and its log are readable;
 *   two workers both serve webhooks; a worker container killed mid-run leaves its run INTERNAL_ERROR
 *   (WORKER_LOST) and the next webhook is answered; after a Redis restart webhooks answer again;
 *   with the pgbouncer service and docker-compose.pgbouncer.yml the app is recreated behind the
 *   transaction-mode pooler and webhooks answer through it; `down` leaves no container, volume
 *   or network behind.
 *
 * Run it as root on a machine with podman, podman-compose, runc and debootstrap:
 *   node docker/test/podman/compose-check.ts
 * It prints one line per stage with its duration and exits non-zero on the first failure, or 3
 * without trying when podman cannot start a container here.
 */

const REPO_DIR = fileURLToPath(new URL('../../../', import.meta.url));
const PROJECT = 'flowbox-compose-check';
const TAG = 'compose-check';
const RUN_ID_HEADER = 'x-flowbox-run-id';
/** The exit code that means "not tried": this machine cannot run containers (.ci/run skips). */
const CANNOT_RUN_CONTAINERS = 3;

interface RunView {
  id: string;
  status: string;
  steps: { name: string; status: string }[];
  error: { code: string } | null;
  workerId: string | null;
  logUrl: string | null;
  finishedAt: string | null;
}

async function main(): Promise<void> {
  const started = Date.now();
  const stage = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const at = Date.now();
    console.log(`==> ${name}`);
    const result = await work();
    console.log(`    ${name}: ${((Date.now() - at) / 1000).toFixed(1)} s`);
    return result;
  };

  const log = (line: string) => console.log(`    ${line}`);
  if (!(await canRunContainers(log))) {
    console.log('compose check skipped: podman cannot start a container on this machine');
    process.exitCode = CANNOT_RUN_CONTAINERS;
    return;
  }
  const standins = await stage(
    'stand-in images (Debian, Node 24, PostgreSQL, PgBouncer, Redis, versitygw)',
    () =>
      ensureStandinImages({
        nodeBinary: process.execPath,
        versitygwBinary: versitygwBinary(),
        caBundle: process.env.SSL_CERT_FILE ?? '/etc/ssl/certs/ca-certificates.crt',
        log,
      }),
  );

  const appImage = 'localhost/flowbox-app';
  const workerImage = 'localhost/flowbox-worker';
  await stage('flowbox images from docker/Dockerfile', async () => {
    for (const [target, image] of [
      ['app', appImage],
      ['worker', workerImage],
    ] as const) {
      await podman(
        [
          'build',
          '--network',
          'host',
          '-f',
          'docker/Dockerfile',
          '--ignorefile',
          'docker/Dockerfile.dockerignore',
          '--build-arg',
          `NODE_IMAGE=${standins.node}`,
          '--target',
          target,
          '-t',
          `${image}:${TAG}`,
          '.',
        ],
        { cwd: REPO_DIR },
      );
    }
  });

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const apiKey = randomBytes(16).toString('hex');
  const stack = new ComposeStack(PROJECT, {
    POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
    REDIS_PASSWORD: randomBytes(16).toString('hex'),
    S3_ACCESS_KEY_ID: randomBytes(10).toString('hex'),
    S3_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
    API_KEY: apiKey,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    WAIT_URL_SECRET: randomBytes(32).toString('hex'),
    FLOWBOX_PORT: String(port),
    FLOWBOX_APP_IMAGE: appImage,
    FLOWBOX_WORKER_IMAGE: workerImage,
    FLOWBOX_TAG: TAG,
    POSTGRES_IMAGE: standins.postgres,
    PGBOUNCER_IMAGE: standins.pgbouncer,
    REDIS_IMAGE: standins.redis,
    VERSITYGW_IMAGE: standins.versitygw,
    SEED_BENCHMARK_FLOW: 'true',
    // One attempt: a killed worker's run ends WORKER_LOST instead of running again.
    RUN_MAX_ATTEMPTS: '1',
    WORKER_REPLICAS: '1',
  });
  const api = apiClient(base, apiKey);

  await stack.down();
  try {
    await stage('stores up and healthy (postgres, redis, s3)', async () => {
      await stack.up(['postgres', 'redis', 's3']);
      for (const service of ['postgres', 'redis', 's3']) await stack.waitHealthy(service, 90_000);
    });
    await stage('app up and healthy', async () => {
      await stack.up(['app']);
      await stack.waitHealthy('app', 120_000);
    });
    await stage('worker token minted, one worker up', async () => {
      await stack.up(['worker-token']);
      const token = await stack.container('worker-token');
      await podman(['wait', token.name]);
      const minted = await stack.container('worker-token');
      assert.equal(
        minted.exitCode,
        0,
        `worker-token exited ${minted.exitCode}: ${await stack.logs(minted.name)}`,
      );
      await stack.up(['worker']);
      await waitFor('one worker connected', 60_000, async () => (await api.workers()) === 1);
    });

    await stage('benchmark webhook answers {"result":6}; its run and log are readable', async () => {
      const { status, body, runId } = await api.webhook('benchmark');
      assert.equal(status, 200, body);
      assert.deepEqual(JSON.parse(body), { result: 6 });
      const run = await api.finalRun(runId);
      assert.equal(run.status, 'SUCCEEDED', JSON.stringify(run));
      assert.deepEqual(
        run.steps.map((s) => s.name),
        ['trigger', 'step_1', 'step_2', 'step_3'],
      );
      assert.ok(run.logUrl, 'the run has a log');
      // The log URL is presigned for the s3 service's name, which resolves inside the network.
      const output = await fetchInsideApp(stack, run.logUrl);
      assert.match(output, /^200 /, output);
      assert.ok(output.includes(runId), `the log names its run: ${output.slice(0, 300)}`);
    });

    await stage('metrics: the app on its port, the worker on the stack network', async () => {
      const appMetrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(appMetrics, /^flowbox_runs_accepted_total 1$/m);
      assert.doesNotMatch(appMetrics, /flow=/, 'no flow id in metric labels');
      const output = await fetchInsideApp(stack, 'http://worker:9464/metrics');
      assert.match(output, /^200 /, output.slice(0, 300));
      assert.match(output, /^flowbox_worker_jobs_total\{status="SUCCEEDED"\} 1$/m);
    });

    await stage('scaled to two workers, both serve webhooks', async () => {
      await stack.up(['worker'], { WORKER_REPLICAS: '2' });
      await waitFor('two workers connected', 60_000, async () => (await api.workers()) === 2);
      const answers = await Promise.all(Array.from({ length: 6 }, () => api.webhook('benchmark')));
      for (const answer of answers) assert.equal(answer.body, '{"result":6}');
      const runs = await Promise.all(answers.map((a) => api.finalRun(a.runId)));
      const workers = new Set(runs.map((r) => r.workerId));
      assert.equal(workers.size, 2, `runs served by ${[...workers].join(', ')}`);
    });

    await stage(
      'a worker container killed mid-run: the run ends INTERNAL_ERROR, the next webhook answers',
      async () => {
        const created = await api.request('POST', '/v1/flows', {
          id: 'answers-then-works',
          name: 'answers, then works on',
          definition: ANSWERS_THEN_WORKS,
          publish: true,
        });
        assert.equal(created.status, 201, created.body);
        const { status, runId } = await api.webhook('answers-then-works');
        assert.equal(status, 200);
        const running = await api.run(runId);
        assert.equal(running.status, 'RUNNING');
        const busy = await containerOfWorker(stack, running.workerId ?? '');
        await podman(['kill', '--signal', 'KILL', busy]);
        const run = await api.finalRun(runId);
        assert.equal(run.status, 'INTERNAL_ERROR');
        assert.equal(run.error?.code, 'WORKER_LOST', JSON.stringify(run.error));
        const next = await api.webhook('benchmark');
        assert.equal(next.body, '{"result":6}');
        console.log(`    killed ${busy}; run ${runId} ended ${run.status} ${run.error?.code}`);
      },
    );

    await stage('Redis restarted: webhooks answer again', async () => {
      const redis = await stack.container('redis');
      await podman(['restart', redis.name]);
      await stack.waitHealthy('redis', 60_000);
      await waitFor('a webhook answered after the restart', 90_000, async () => {
        const answer = await api.webhook('benchmark').catch(() => null);
        return answer?.body === '{"result":6}';
      });
      const answers = await Promise.all(Array.from({ length: 3 }, () => api.webhook('benchmark')));
      for (const answer of answers) assert.equal(answer.body, '{"result":6}');
    });

    await stage(
      'behind PgBouncer (the profile and its override file): webhooks answer through it',
      async () => {
        const pooled = stack.withOverride('docker-compose.pgbouncer.yml');
        await pooled.up(['pgbouncer']);
        await pooled.waitHealthy('pgbouncer', 60_000);
        // podman-compose 1.0.3 does not recreate a service whose settings changed: remove it first.
        await podman(['rm', '-f', '-t', '1', (await stack.container('app')).name]);
        await pooled.up(['app']);
        await pooled.waitHealthy('app', 120_000);
        await waitFor('a worker connected to the new app', 60_000, async () => (await api.workers()) >= 1);
        const before = await pooledTransactions(stack);
        const answers = await Promise.all(Array.from({ length: 3 }, () => api.webhook('benchmark')));
        for (const answer of answers) assert.equal(answer.body, '{"result":6}');
        for (const answer of answers) assert.equal((await api.finalRun(answer.runId)).status, 'SUCCEEDED');
        const after = await pooledTransactions(stack);
        // The app could still reach postgres directly; the pooler's count shows it did not.
        assert.ok(after > before, `transactions through the pooler: ${before} before, ${after} after`);
        console.log(`    ${after - before} transactions through the pooler for 3 webhooks`);
      },
    );
  } catch (error) {
    for (const container of await stack.containers().catch(() => [])) {
      console.error(`--- ${container.name} (running: ${container.running}, exit ${container.exitCode})`);
      console.error(await stack.logs(container.name));
    }
    throw error;
  } finally {
    await stage('down: nothing left running', async () => {
      await stack.down();
      const left = await stack.leftovers();
      assert.deepEqual(left, [], `left behind: ${left.join(', ')}`);
    });
  }
  console.log(`compose check passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function apiClient(base: string, apiKey: string) {
  const request = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  const run = async (runId: string) =>
    JSON.parse((await request('GET', `/v1/runs/${runId}`)).body) as RunView;
  return {
    request,
    run,
    async webhook(flowId: string) {
      const response = await request('POST', `/v1/webhooks/${flowId}/sync`, {});
      return { ...response, runId: response.headers.get(RUN_ID_HEADER) ?? '' };
    },
    async workers(): Promise<number> {
      const ready = await request('GET', '/health/ready').catch(() => null);
      return ready === null ? 0 : ((JSON.parse(ready.body) as { workers?: number }).workers ?? 0);
    },
    async finalRun(runId: string): Promise<RunView> {
      let last: RunView | null = null;
      await waitFor(`run ${runId} final`, 60_000, async () => {
        last = await run(runId);
        return last.finishedAt !== null;
      });
      return last as unknown as RunView;
    },
  };
}

/** GETs a URL from inside the app container (where the stack's service names resolve): "<status> <body>". */
async function fetchInsideApp(stack: ComposeStack, url: string): Promise<string> {
  const app = await stack.container('app');
  const script = 'const r = await fetch(process.argv[1]); console.log(r.status, await r.text());';
  return (await podman(['exec', app.name, 'node', '--input-type=module', '-e', script, url])).output;
}

/** Transactions PgBouncer has passed to the flowbox database (`SHOW STATS` on its admin console). */
async function pooledTransactions(stack: ComposeStack): Promise<number> {
  const pooler = await stack.container('pgbouncer');
  const { output } = await podman([
    'exec',
    '-e',
    `PGPASSWORD=${stack.env.POSTGRES_PASSWORD}`,
    pooler.name,
    'psql',
    '--csv',
    '-h',
    '127.0.0.1',
    '-U',
    'flowbox',
    '-d',
    'pgbouncer',
    '-c',
    'SHOW STATS',
  ]);
  const [header = '', ...rows] = output.trim().split('\n');
  const column = header.split(',').indexOf('total_xact_count');
  const row = rows.map((line) => line.split(',')).find((cells) => cells[0] === 'flowbox');
  assert.ok(column >= 0 && row !== undefined, `no flowbox row in SHOW STATS:\n${output}`);
  return Number(row[column]);
}

/** The worker container whose hostname starts `workerId` (`<hostname>-<pid>`). */
async function containerOfWorker(stack: ComposeStack, workerId: string): Promise<string> {
  for (const container of await stack.containers('worker')) {
    if (container.running && workerId.startsWith(`${container.id.slice(0, 12)}-`)) return container.name;
  }
  throw new Error(`no running worker container is ${workerId}`);
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(500);
  }
}

function versitygwBinary(): string {
  const candidates = [
    join(
      process.env.FLOWBOX_TOOLS_DIR ?? join(process.env.HOME ?? '/root', '.cache/flowbox'),
      'bin/versitygw',
    ),
    ...(process.env.PATH ?? '').split(':').map((dir) => join(dir, 'versitygw')),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error('versitygw not found (CI builds it into $FLOWBOX_TOOLS_DIR/bin)');
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
