/**
 * `pnpm bench:schedule`: publishes many flows scheduled every minute on a local stack, lets
 * ticks pass, and reports how late each tick's runs were and what the shared tiers spent
 * between ticks. See benchmark/README.md ("Schedules at scale").
 */
import { diffPostgres, type PostgresSnapshot } from '../postgres-stats.ts';
import { clockTicksPerSecond } from '../proc-stats.ts';
import { diffRedis, type RedisSnapshot } from '../redis-stats.ts';
import { type CpuMark, cpuWindow, markCpu } from '../standalone/cpu-window.ts';
import { type LocalStack, sleep } from '../standalone/local-stack.ts';
import { readScriptOptions, runScript, say, writeReport } from '../standalone/script-run.ts';
import { reportHead, startScriptRun } from '../standalone/script-stack.ts';
import { parseScheduleArgs, SCHEDULE_USAGE, type ScheduleLoadOptions } from './schedule-args.ts';
import {
  renderScheduleReport,
  reportBaseName,
  type ScheduleReport,
  type ScheduleTickResult,
} from './schedule-report.ts';
import { seedScheduleFlows } from './seed-schedules.ts';
import { finishScheduledRuns, readTick, tickProgress } from './tick-stats.ts';

/** The between-ticks window ends this long before the next tick. */
const GUARD_MS = 200;
/** The tick's progress is read this often (a scan of its rows): the burst only, never between ticks. */
const POLL_MS = 500;
/** The next tick must be this far after seeding, so every app has read every flow (refresh 2 s). */
const SETTLE_MS = 5_000;

interface Mark {
  cpu: CpuMark;
  redis: RedisSnapshot;
  postgres: PostgresSnapshot;
}

async function main(): Promise<number> {
  const options = readScriptOptions(SCHEDULE_USAGE, parseScheduleArgs);
  if (typeof options === 'number') return options;
  const run = await startScriptRun(options, {
    env: options.everyS < 60 ? { SCHEDULE_MIN_INTERVAL_SECONDS: String(options.everyS) } : {},
    name: `schedules-${options.flows}x${options.everyS}s`,
  });
  const { local, signal } = run;
  const ticks: ScheduleTickResult[] = [];
  let seedS = 0;
  try {
    const seedStart = performance.now();
    let lastSaid = 0;
    await seedScheduleFlows({
      appUrl: local.stack.appUrls[0] ?? '',
      apiKey: local.stack.apiKey,
      count: options.flows,
      everyS: options.everyS,
      concurrency: options.seedConcurrency,
      signal,
      onProgress: (done) => {
        if (performance.now() - lastSaid > 5_000 || done === options.flows) {
          lastSaid = performance.now();
          say(`seeded ${done}/${options.flows} flows`);
        }
      },
    });
    seedS = (performance.now() - seedStart) / 1000;
    await measureTicks(local, options, ticks, say, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    say('reading the ticks and stopping the stack');
    try {
      for (const tick of ticks) tick.record = await readTick(local.db, new Date(tick.record.scheduledAt));
    } finally {
      await local.close();
    }
  }
  const report: ScheduleReport = {
    ...reportHead('pnpm bench:schedule', run),
    options: {
      flows: options.flows,
      everyS: options.everyS,
      ticks: options.ticks,
      warmupTicks: options.warmupTicks,
      apps: options.apps,
      workers: options.workers,
      seedConcurrency: options.seedConcurrency,
      build: options.build,
    },
    seedS,
    ticks,
    aborted: signal.aborted,
  };
  await writeReport(options.outDir, reportBaseName(report), renderScheduleReport(report), report);
  return signal.aborted ? 130 : 0;
}

/**
 * Waits for the first measured tick, then per tick: waits until every flow's tick is recorded
 * (and its runs final, or marked finished without workers), marks the CPU, and marks it again
 * just before the next tick. Nothing of the script's own touches Postgres between the marks.
 */
async function measureTicks(
  local: LocalStack,
  options: ScheduleLoadOptions,
  results: ScheduleTickResult[],
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const intervalMs = options.everyS * 1000;
  const ticksPerSecond = clockTicksPerSecond();
  const roots = local.stack.roots;
  const mark = async (): Promise<Mark> => ({
    cpu: markCpu(roots),
    redis: await local.redis.snapshot(),
    postgres: await local.postgres.snapshot(),
  });
  let first = (Math.floor((Date.now() + SETTLE_MS) / intervalMs) + 1) * intervalMs;
  first += options.warmupTicks * intervalMs;
  say(`first measured tick at ${new Date(first).toISOString()}`);
  await sleep(first - GUARD_MS - 2_000 - Date.now(), signal);
  // What the seeding and the warm-up ticks left queued is not the measured ticks' backlog.
  if (options.workers === 0) await finishScheduledRuns(local.db);
  await sleep(first - GUARD_MS - Date.now(), signal);
  let start = await mark();
  for (let k = 0; k < options.ticks; k++) {
    const tickAt = first + k * intervalMs;
    const endAt = tickAt + intervalMs - GUARD_MS;
    await sleep(tickAt - Date.now(), signal);
    let done: Mark | null = null;
    let burstS: number | null = null;
    while (Date.now() < endAt) {
      const progress = await tickProgress(local.db, new Date(tickAt));
      const complete =
        progress.recorded >= options.flows && (options.workers === 0 || progress.unfinished === 0);
      if (complete) {
        if (options.workers === 0) await finishScheduledRuns(local.db);
        burstS = (Date.now() - tickAt) / 1000;
        done = await mark();
        break;
      }
      await sleep(POLL_MS, signal);
    }
    await sleep(endAt - Date.now(), signal);
    const end = await mark();
    const between = done === null ? null : windowOf(done, end, ticksPerSecond);
    results.push({
      record: { scheduledAt: new Date(tickAt).toISOString(), outcomes: {}, created: null, started: null },
      burstS,
      interval: cpuWindow(start.cpu, end.cpu, ticksPerSecond),
      between: between?.cpu ?? null,
      betweenRedisCommandsPerS: between?.redisPerS ?? null,
      betweenPostgresStatementsPerS: between?.postgresPerS ?? null,
    });
    const sum =
      between === null ? null : between.cpu.cores.app + between.cpu.cores.redis + between.cpu.cores.postgres;
    say(
      `tick ${k + 1}/${options.ticks}: done after ${burstS === null ? 'the whole interval' : `${burstS.toFixed(2)} s`}; between ticks apps+Redis+Postgres ${sum === null ? '–' : `${(sum * 100).toFixed(1)} % of a core`}`,
    );
    start = end;
  }
}

function windowOf(from: Mark, to: Mark, ticksPerSecond: number) {
  const cpu = cpuWindow(from.cpu, to.cpu, ticksPerSecond);
  const statements = diffPostgres(from.postgres, to.postgres).statements;
  return {
    cpu,
    redisPerS: diffRedis(from.redis, to.redis).commands / cpu.seconds,
    postgresPerS: statements === null ? null : statements / cpu.seconds,
  };
}

runScript('schedule', main);
