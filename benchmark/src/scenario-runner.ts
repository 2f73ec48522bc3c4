import type { ExecutionMode } from '@flowbox/protocol';
import { computeAnatomy } from './anatomy.ts';
import { readEventLoopDelay } from './app-event-loop.ts';
import { runLoad } from './load.ts';
import type { LoadResult } from './load-result.ts';
import { type LogTallySnapshot, logLinesBetween } from './log-tally.ts';
import { runPacedLoad } from './paced-load.ts';
import { diffPostgres, type PostgresProbe } from './postgres-stats.ts';
import {
  cpuBetween,
  type KindRoots,
  type MemoryPeaks,
  PROCESS_KINDS,
  type ProcessKind,
  type ProcSnapshot,
  readMachineBusyTicks,
  readTreeStats,
  snapshotOf,
  startMemorySampler,
} from './proc-stats.ts';
import { diffRedis, type RedisProbe } from './redis-stats.ts';
import type { KindUsage, RepeatResult, ScenarioResult } from './result-types.ts';
import { fetchRuns, webhookPath } from './runs-api.ts';
import { flowIdFor, type Scenario } from './scenarios.ts';

/**
 * Runs one scenario against a stack that is already up (local or --target): a warm-up, then
 * the measured repeats. Each repeat: snapshot the counters, load for the duration, wait until
 * every run created in the window is finished (so its Redis commands, statements and CPU are in
 * the window), snapshot again, and read the runs' timings.
 */
export interface MeasureContext {
  appUrls: string[];
  /** null: the runs API cannot be read (no --api-key), so there is no anatomy. */
  apiKey: string | null;
  /** Null in --target mode: the processes are not on this machine. */
  roots: KindRoots | null;
  redis: RedisProbe | null;
  postgres: PostgresProbe | null;
  logCounts: () => LogTallySnapshot;
  ticksPerSecond: number;
  signal: AbortSignal;
  onProgress: (phase: string, fraction: number | null, detail: string) => void;
}

export interface RunSettings {
  durationS: number;
  repeats: number;
  warmupPerWorker: number;
  /** The workers' EXECUTION_MODE (local stacks only). */
  executionMode: ExecutionMode;
}

const REQUEST_TIMEOUT_S = 60;
const SETTLE_TIMEOUT_MS = 60_000;
const POLL_MS = 50;
const MEMORY_SAMPLE_MS = 200;
/** Counters must stand still for this many polls in a row before the window closes. */
const QUIET_POLLS = 2;
const QUIET_TIMEOUT_MS = 3_000;
/**
 * Cold modes boot a fresh engine for every job whatever happened before, so their warm-up only
 * has to fill the provisioning caches and warm the app and worker processes: a few jobs do.
 */
const COLD_WARMUP_PER_WORKER = 10;
const IDLE_MS = 2_000;

export async function runScenario(
  ctx: MeasureContext,
  scenario: Scenario,
  settings: RunSettings,
): Promise<Pick<ScenarioResult, 'warmup' | 'idle' | 'repeats'>> {
  const urls = ctx.appUrls.map((url) => `${url}${webhookPath(flowIdFor(scenario.mode))}`);
  let warmup: ScenarioResult['warmup'] = null;
  const perWorker =
    scenario.mode === 'cold' || scenario.mode === 'cold-prewarm'
      ? Math.min(settings.warmupPerWorker, COLD_WARMUP_PER_WORKER)
      : settings.warmupPerWorker;
  // Simulated workers have no engine or cache to warm: the apps' JIT needs a few rounds, not one per worker.
  const warmupRequests =
    perWorker *
    (scenario.mode === 'sim' ? Math.min(scenario.workers, scenario.connections) : scenario.workers);
  if (warmupRequests > 0) {
    const since = new Date();
    ctx.onProgress('warm-up', 0, '');
    const load = await runLoad({
      urls,
      // One request per worker at a time; fewer when the scenario has fewer connections. A run
      // that pauses frees its worker: its requests are sent together, or the warm-up would wait
      // out every delay one after the other.
      connections: pauses(scenario)
        ? Math.min(warmupRequests, scenario.connections)
        : Math.min(scenario.workers, scenario.connections),
      amount: warmupRequests,
      timeoutS: REQUEST_TIMEOUT_S,
      signal: ctx.signal,
      onProgress: (responses) => ctx.onProgress('warm-up', responses / warmupRequests, `${responses} req`),
    });
    warmup = { requests: load.responses, ok: load.ok, durationS: load.durationS };
    if (load.ok === 0)
      throw new Error(`warm-up: none of ${warmupRequests} requests succeeded (${describe(load)})`);
    ctx.onProgress('settling', null, '');
    await settle(ctx, since, flowIdFor(scenario.mode));
  }
  ctx.onProgress('idle baseline', null, '');
  const idle = await measureIdle(ctx, scenario.idleS === undefined ? IDLE_MS : scenario.idleS * 1000);
  const repeats: RepeatResult[] = [];
  for (let index = 0; index < settings.repeats && !ctx.signal.aborted; index++) {
    try {
      repeats.push(await measureRepeat(ctx, scenario, settings, urls, index));
    } catch (error) {
      // Stopped with Ctrl-C: keep the repeats that finished, drop the one cut short.
      if (ctx.signal.aborted) break;
      throw error;
    }
  }
  return { warmup, idle, repeats };
}

async function measureRepeat(
  ctx: MeasureContext,
  scenario: Scenario,
  settings: RunSettings,
  urls: string[],
  index: number,
): Promise<RepeatResult> {
  const label = `repeat ${index + 1}/${settings.repeats}`;
  const since = new Date();
  const sampler = ctx.roots === null ? null : await startMemorySampler(ctx.roots, MEMORY_SAMPLE_MS);
  const procStart = ctx.roots === null ? null : snapshotOf(readTreeStats(ctx.roots), ctx.roots);
  const machineStart = ctx.roots === null ? null : readMachineBusyTicks();
  const redisBefore = await ctx.redis?.snapshot();
  const postgresBefore = await ctx.postgres?.snapshot();
  const logsBefore = ctx.logCounts();
  // Local stacks only: a deployment's /metrics may be private, and other scrapers reset it too.
  if (ctx.roots !== null) await readEventLoopDelay(ctx.appUrls, ctx.signal);
  const started = performance.now();
  // A pause scenario's load is its burst: `connections` requests over one second.
  const durationS = scenario.mode === 'pause' ? 1 : settings.durationS;
  const shared = {
    urls,
    connections: scenario.connections,
    durationS,
    timeoutS: REQUEST_TIMEOUT_S,
    signal: ctx.signal,
    onProgress: (responses: number, elapsedS: number) =>
      ctx.onProgress(
        label,
        Math.min(1, elapsedS / durationS),
        `${elapsedS.toFixed(1)}/${durationS} s  ${responses} req  ${(responses / Math.max(elapsedS, 0.001)).toFixed(0)} req/s`,
      ),
  };
  // A fixed-rate scenario paces its requests itself (paced-load.ts); others load back to back.
  const load =
    scenario.rate === undefined
      ? await runLoad(shared)
      : await runPacedLoad({ ...shared, rate: scenario.rate });
  ctx.onProgress(`${label} settling`, null, '');
  const settled = await settle(ctx, since, flowIdFor(scenario.mode));
  const eventLoop = ctx.roots === null ? null : await readEventLoopDelay(ctx.appUrls, ctx.signal);
  const procEnd = ctx.roots === null ? null : snapshotOf(readTreeStats(ctx.roots), ctx.roots);
  const machineEnd = ctx.roots === null ? null : readMachineBusyTicks();
  const memory = (await sampler?.stop()) ?? {};
  const windowS = (performance.now() - started) / 1000;
  const redisAfter = await ctx.redis?.snapshot();
  const postgresAfter = await ctx.postgres?.snapshot();
  const logsAfter = ctx.logCounts();

  const runs =
    ctx.apiKey === null
      ? null
      : await fetchRuns(ctx.appUrls[0] ?? '', ctx.apiKey, since, ctx.signal, flowIdFor(scenario.mode));
  const anatomy = runs === null ? null : computeAnatomy(runs);
  // Runs the server finished successfully; autocannon does not count the requests it cut off
  // at the end of the duration, but their work is in the counters.
  const requests = anatomy === null ? load.ok : anatomy.succeeded;
  const per = (value: number) => (requests > 0 ? value / requests : Number.NaN);
  const redisDelta = redisBefore && redisAfter ? diffRedis(redisBefore, redisAfter) : null;
  const postgresDelta = postgresBefore && postgresAfter ? diffPostgres(postgresBefore, postgresAfter) : null;
  return {
    index,
    startedAt: since.toISOString(),
    windowS,
    load,
    settled,
    requests,
    processes:
      procStart === null || procEnd === null
        ? null
        : kindUsage(procStart, procEnd, memory, ctx.ticksPerSecond, windowS, requests),
    machineCpuSeconds:
      machineStart === null || machineEnd === null ? null : (machineEnd - machineStart) / ctx.ticksPerSecond,
    redis:
      redisDelta === null
        ? null
        : {
            ...redisDelta,
            commandsPerRequest: per(redisDelta.commands),
            roundTripsPerRequest: per(redisDelta.roundTrips),
          },
    postgres:
      postgresDelta === null
        ? null
        : {
            ...postgresDelta,
            statementsPerRequest: postgresDelta.statements === null ? null : per(postgresDelta.statements),
            transactionsPerRequest: per(postgresDelta.transactions),
          },
    anatomy,
    appEventLoopDelay: eventLoop,
    logLines: logLinesBetween(logsBefore, logsAfter),
  };
}

function kindUsage(
  start: ProcSnapshot,
  end: ProcSnapshot,
  memory: Partial<Record<ProcessKind, MemoryPeaks>>,
  ticksPerSecond: number,
  windowS: number,
  requests: number,
): Partial<Record<ProcessKind, KindUsage>> {
  const cpu = cpuBetween(start, end, ticksPerSecond);
  const present = new Set<ProcessKind>(
    [...start.members.values(), ...end.members.values()].map((m) => m.kind),
  );
  const out: Partial<Record<ProcessKind, KindUsage>> = {};
  for (const kind of PROCESS_KINDS) {
    const peaks = memory[kind];
    if (!present.has(kind) && peaks === undefined && cpu[kind] === 0) continue;
    out[kind] = {
      cpuSeconds: cpu[kind],
      cores: windowS > 0 ? cpu[kind] / windowS : 0,
      cpuMsPerRequest: requests > 0 ? (cpu[kind] * 1000) / requests : null,
      peakRssMb: peaks?.peakRssMb ?? null,
      peakTotalRssMb: peaks?.peakTotalRssMb ?? null,
      processes: peaks?.processes ?? 0,
    };
  }
  return out;
}

/**
 * What Redis and Postgres do with no request at all (BullMQ's blocking polls and periodic
 * checks, sweepers): every window includes some, so the report shows the rate beside the
 * per-request figures.
 */
async function measureIdle(ctx: MeasureContext, idleMs: number): Promise<ScenarioResult['idle']> {
  if (ctx.redis === null && ctx.postgres === null) return null;
  const redisBefore = await ctx.redis?.snapshot();
  const postgresBefore = await ctx.postgres?.snapshot();
  const procBefore = ctx.roots === null ? null : snapshotOf(readTreeStats(ctx.roots), ctx.roots);
  const started = performance.now();
  await sleep(idleMs, ctx.signal);
  const procAfter = ctx.roots === null ? null : snapshotOf(readTreeStats(ctx.roots), ctx.roots);
  const redisAfter = await ctx.redis?.snapshot();
  const postgresAfter = await ctx.postgres?.snapshot();
  const seconds = (performance.now() - started) / 1000;
  const redis = redisBefore && redisAfter ? diffRedis(redisBefore, redisAfter) : null;
  const postgres = postgresBefore && postgresAfter ? diffPostgres(postgresBefore, postgresAfter) : null;
  const cpu =
    procBefore === null || procAfter === null ? null : cpuBetween(procBefore, procAfter, ctx.ticksPerSecond);
  return {
    seconds,
    redisCommandsPerSecond: redis === null ? null : redis.commands / seconds,
    redisRoundTripsPerSecond: redis === null ? null : redis.roundTrips / seconds,
    postgresStatementsPerSecond: postgres?.statements == null ? null : postgres.statements / seconds,
    ...(cpu === null
      ? {}
      : { cores: Object.fromEntries(PROCESS_KINDS.map((kind) => [kind, cpu[kind] / seconds])) }),
  };
}

/**
 * Waits until every run created since `since` is final with its timings recorded, then until
 * Redis and Postgres counters stand still (a result's last writes may follow its timings).
 * Returns false when the runs did not finish in time.
 */
async function settle(ctx: MeasureContext, since: Date, flowId: string): Promise<boolean> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let settled = false;
  while (Date.now() < deadline) {
    ctx.signal.throwIfAborted();
    const pending = await pendingRuns(ctx, since, flowId);
    if (pending === 0) {
      settled = true;
      break;
    }
    await sleep(POLL_MS);
  }
  await waitForQuiet(ctx);
  return settled;
}

async function pendingRuns(ctx: MeasureContext, since: Date, flowId: string): Promise<number | null> {
  if (ctx.postgres !== null) return (await ctx.postgres.pendingRuns(since)).pending;
  if (ctx.apiKey === null) return 0;
  const runs = await fetchRuns(ctx.appUrls[0] ?? '', ctx.apiKey, since, ctx.signal, flowId);
  // A run that ended without a worker (CALLER_GONE) has no timings and never will.
  return runs.filter(
    (r) =>
      r.status === 'QUEUED' ||
      r.status === 'RUNNING' ||
      r.status === 'PAUSED' ||
      (r.timings === null && r.workerId !== null),
  ).length;
}

async function waitForQuiet(ctx: MeasureContext): Promise<void> {
  if (ctx.redis === null && ctx.postgres === null) return;
  const deadline = Date.now() + QUIET_TIMEOUT_MS;
  let quietPolls = 0;
  let redisPrev = await ctx.redis?.snapshot();
  let postgresPrev = await ctx.postgres?.snapshot();
  while (quietPolls < QUIET_POLLS && Date.now() < deadline) {
    await sleep(POLL_MS);
    const redisNow = await ctx.redis?.snapshot();
    const postgresNow = await ctx.postgres?.snapshot();
    const redisMoved = redisPrev && redisNow ? diffRedis(redisPrev, redisNow).commands > 0 : false;
    const postgresMoved =
      postgresPrev && postgresNow ? (diffPostgres(postgresPrev, postgresNow).statements ?? 0) > 0 : false;
    quietPolls = redisMoved || postgresMoved ? 0 : quietPolls + 1;
    redisPrev = redisNow;
    postgresPrev = postgresNow;
  }
}

/** Scenarios whose runs pause (the durable-run flows with a delay). */
function pauses(scenario: Scenario): boolean {
  return scenario.mode === 'pause' || scenario.mode === 'delay';
}

function describe(load: LoadResult): string {
  const codes = Object.entries(load.statusCodes)
    .map(([code, n]) => `${n}x${code}`)
    .join(', ');
  return `${load.responses} responses${codes === '' ? '' : ` (${codes})`}, ${load.errors} errors, ${load.timeouts} timeouts`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
