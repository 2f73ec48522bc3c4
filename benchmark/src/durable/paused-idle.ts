/**
 * `pnpm bench:paused-idle`: what paused runs cost while they wait. Measures the idle stack, then
 * leaves --runs runs paused on a one-hour delay and measures it again. See benchmark/README.md.
 */
import { BENCHMARK_NODELAY_FLOW_ID, BENCHMARK_PAUSE_HOUR_FLOW_ID } from '@flowbox/protocol';
import { Redis } from 'ioredis';
import { diffPostgres } from '../postgres-stats.ts';
import { clockTicksPerSecond } from '../proc-stats.ts';
import { diffRedis } from '../redis-stats.ts';
import { cpuWindow, markCpu } from '../standalone/cpu-window.ts';
import { type LocalStack, sleep } from '../standalone/local-stack.ts';
import { readScriptOptions, runScript, say, writeReport } from '../standalone/script-run.ts';
import { reportHead, startScriptRun } from '../standalone/script-stack.ts';
import { PAUSED_IDLE_USAGE, type PausedIdleOptions, parsePausedIdleArgs } from './paused-idle-args.ts';
import {
  type IdleWindow,
  type PausedIdleReport,
  renderPausedIdleReport,
  reportBaseName,
} from './paused-idle-report.ts';
import { createPausedRuns, runStatuses, sendSyncRequests } from './paused-runs.ts';

/** Sync requests to the flow without a delay before the first window: engines booted, code JIT-compiled. */
const WARMUP_REQUESTS = 50;

async function main(): Promise<number> {
  const options = readScriptOptions(PAUSED_IDLE_USAGE, parsePausedIdleArgs);
  if (typeof options === 'number') return options;
  const run = await startScriptRun(options, {
    // The runs are created faster than they pause: no queue bound refuses them.
    env: { PAUSE_MIN_MS: '1000', FLOW_MAX_QUEUED_RUNS: '0', WEBHOOK_MAX_QUEUED_RUNS: '0' },
    name: `paused-idle-${options.runs}`,
  });
  const { local, signal } = run;
  const memory = new Redis(local.redisUrl, { lazyConnect: true });
  memory.on('error', () => {});
  const windows: IdleWindow[] = [];
  let createS: number | null = null;
  let waits: PausedIdleReport['waits'] = null;
  let resumesDelayed: number | null = null;
  try {
    await memory.connect();
    const appUrl = local.stack.appUrls[0] ?? '';
    say(`warming up: ${WARMUP_REQUESTS} sync requests to ${BENCHMARK_NODELAY_FLOW_ID}`);
    await sendSyncRequests(appUrl, BENCHMARK_NODELAY_FLOW_ID, WARMUP_REQUESTS, signal);
    windows.push(await idleWindow(local, memory, options, 0, say, signal));
    say(`creating ${options.runs} runs that pause for an hour`);
    const created = performance.now();
    await createPausedRuns({
      appUrl,
      flowId: BENCHMARK_PAUSE_HOUR_FLOW_ID,
      count: options.runs,
      concurrency: options.concurrency,
      db: local.db,
      signal,
      say,
    });
    createS = (performance.now() - created) / 1000;
    const statuses = await runStatuses(local.db, BENCHMARK_PAUSE_HOUR_FLOW_ID);
    say(`runs by status: ${JSON.stringify(statuses)}`);
    waits = await unansweredWaits(local);
    resumesDelayed = await delayedResumes(memory);
    windows.push(await idleWindow(local, memory, options, statuses.PAUSED ?? 0, say, signal));
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    memory.disconnect();
    await local.close();
  }
  const report: PausedIdleReport = {
    ...reportHead('pnpm bench:paused-idle', run),
    options: {
      runs: options.runs,
      idleS: options.idleS,
      parts: options.parts,
      settleS: options.settleS,
      apps: options.apps,
      workers: options.workers,
      concurrency: options.concurrency,
      build: options.build,
    },
    createS,
    waits,
    resumesDelayed,
    windows,
    aborted: signal.aborted,
  };
  await writeReport(options.outDir, reportBaseName(report), renderPausedIdleReport(report), report);
  return signal.aborted ? 130 : 0;
}

/**
 * One idle window: VACUUM ANALYZE (so autovacuum's catching up after many writes does not land
 * in one window only), the settle time, then the window in equal parts, nothing sent meanwhile.
 */
async function idleWindow(
  local: LocalStack,
  memory: Redis,
  options: PausedIdleOptions,
  paused: number,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<IdleWindow> {
  await local.db.query('VACUUM ANALYZE');
  say(`${paused} paused: settling ${options.settleS} s, then measuring ${options.idleS} s`);
  await sleep(options.settleS * 1000, signal);
  const ticksPerSecond = clockTicksPerSecond();
  const roots = local.stack.roots;
  const redisBefore = await local.redis.snapshot();
  const postgresBefore = await local.postgres.snapshot();
  const first = markCpu(roots);
  const parts = [];
  let previous = first;
  for (let part = 1; part <= options.parts; part++) {
    await sleep(first.at + (part * options.idleS * 1000) / options.parts - performance.now(), signal);
    const mark = markCpu(roots);
    parts.push(cpuWindow(previous, mark, ticksPerSecond));
    previous = mark;
  }
  const whole = cpuWindow(first, previous, ticksPerSecond);
  const redisAfter = await local.redis.snapshot();
  const postgresAfter = await local.postgres.snapshot();
  const statements = diffPostgres(postgresBefore, postgresAfter).statements;
  const used = /used_memory:(\d+)/.exec(await memory.info('memory'))?.[1];
  const window: IdleWindow = {
    paused,
    whole,
    parts,
    redisCommandsPerS: diffRedis(redisBefore, redisAfter).commands / whole.seconds,
    postgresStatementsPerS: statements === null ? null : statements / whole.seconds,
    redisUsedMemoryMb: Number(used ?? 0) / 1024 ** 2,
  };
  say(
    `${paused} paused: apps+Redis+Postgres ${((whole.cores.app + whole.cores.redis + whole.cores.postgres) * 100).toFixed(2)} % of a core`,
  );
  return window;
}

async function unansweredWaits(local: LocalStack): Promise<PausedIdleReport['waits']> {
  try {
    const { rows } = await local.db.query<{ count: number; earliest: Date | null }>(
      `SELECT count(*)::int AS count, min(COALESCE(resume_at, timeout_at)) AS earliest
         FROM run_waits WHERE answered_at IS NULL`,
    );
    const row = rows[0];
    return row === undefined ? null : { count: row.count, earliestDue: row.earliest?.toISOString() ?? null };
  } catch {
    // No run_waits table: a tree without durable runs.
    return null;
  }
}

/** Resume jobs waiting in Redis (BullMQ's delayed sets of the run queue's shards), read outside the windows. */
async function delayedResumes(redis: Redis): Promise<number | null> {
  const keys = await redis.keys('*runs*:delayed');
  if (keys.length === 0) return null;
  let total = 0;
  for (const key of keys) total += await redis.zcard(key);
  return total;
}

runScript('paused-idle', main);
