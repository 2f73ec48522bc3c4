import type { Anatomy, AnatomySegments } from './anatomy.ts';
import type { EventLoopDelay } from './app-event-loop.ts';
import type { HopTable } from './hops.ts';
import type { LoadResult } from './load-result.ts';
import type { PostgresDelta } from './postgres-stats.ts';
import type { ProcessKind } from './proc-stats.ts';
import type { RedisDelta } from './redis-stats.ts';
import type { TimingField } from './runs-api.ts';
import type { Scenario } from './scenarios.ts';
import type { Spread } from './stats.ts';

/** The shape of `<date>-<host>.json`: everything measured, before and after aggregation. */
export interface KindUsage {
  cpuSeconds: number;
  /** CPU seconds per second of the window: how many cores the kind kept busy. */
  cores: number;
  cpuMsPerRequest: number | null;
  peakRssMb: number | null;
  peakTotalRssMb: number | null;
  processes: number;
}

export interface RedisCost extends RedisDelta {
  commandsPerRequest: number;
  roundTripsPerRequest: number;
}

export interface PostgresCost extends PostgresDelta {
  statementsPerRequest: number | null;
  transactionsPerRequest: number;
}

export interface RepeatResult {
  index: number;
  startedAt: string;
  /** Load plus settling: the window CPU and counters cover. */
  windowS: number;
  load: LoadResult;
  /** False when runs were still unfinished after the settle timeout. */
  settled: boolean;
  /** Successful runs created in the window: what per-request figures divide by. */
  requests: number;
  processes: Partial<Record<ProcessKind, KindUsage>> | null;
  /**
   * The whole machine's busy CPU seconds over the same window (/proc/stat): what the kinds add up
   * to, plus CPU no process of ours is credited with (SANDBOXED engines killed in their PID
   * namespace) and whatever else ran. Absent in reports before it, null with --target.
   */
  machineCpuSeconds?: number | null;
  redis: RedisCost | null;
  postgres: PostgresCost | null;
  anatomy: Anatomy | null;
  /** The worst app's event-loop delay over the window, from its /metrics (local stacks only). */
  appEventLoopDelay?: EventLoopDelay | null;
  /** Warning and error log lines the stack printed during the window. */
  logLines: LogLines;
}

/** One warning or error message the stack printed in a repeat, and how often. */
export interface LogMessageCount {
  level: 'warn' | 'error';
  /** The process kind that printed it (`app`, `worker`, …: `worker-3` counts as `worker`). */
  source: string;
  msg: string;
  count: number;
}

/** What a repeat's window saw of the stack's log (pino levels 40 and 50 and up). */
export interface LogLines {
  warn: number;
  error: number;
  /** By message; absent in reports written before messages were kept. */
  messages?: LogMessageCount[];
}

export interface KindSummary {
  cpuSeconds: Spread | null;
  cores: Spread | null;
  cpuMsPerRequest: Spread | null;
  /** The largest over the repeats. */
  peakRssMb: number | null;
  peakTotalRssMb: number | null;
}

export interface ScenarioSummary {
  reqPerSec: Spread | null;
  reqPerSecPerWorker: Spread | null;
  latency: {
    mean: Spread | null;
    p50: Spread | null;
    p95: Spread | null;
    p99: Spread | null;
    max: Spread | null;
  };
  totals: { responses: number; ok: number; non2xx: number; errors: number; timeouts: number };
  redisCommandsPerRequest: Spread | null;
  redisRoundTripsPerRequest: Spread | null;
  postgresStatementsPerRequest: Spread | null;
  postgresTransactionsPerRequest: Spread | null;
  /** Per timing field: the median over repeats of each repeat's mean and p50. */
  anatomy: Partial<Record<TimingField, { mean: Spread | null; p50: Spread | null }>> | null;
  /** Medians over repeats of each repeat's mean segments (for the stacked chart). */
  segments: AnatomySegments | null;
  processes: Partial<Record<ProcessKind, KindSummary>>;
  engines: { preBootedShare: number | null; freshShare: number | null } | null;
}

export interface ScenarioResult {
  scenario: Scenario;
  status: 'ok' | 'failed' | 'aborted';
  error?: string;
  warmup: { requests: number; ok: number; durationS: number } | null;
  /** Counter rates with no load, measured after the warm-up (null when nothing is counted). */
  idle: {
    seconds: number;
    redisCommandsPerSecond: number | null;
    redisRoundTripsPerSecond: number | null;
    postgresStatementsPerSecond: number | null;
    /** CPU seconds per second of the idle window, per process kind (local stacks). */
    cores?: Partial<Record<ProcessKind, number>>;
  } | null;
  repeats: RepeatResult[];
  summary: ScenarioSummary | null;
  /** `--hops`: where a request's milliseconds went, hop by hop, from its trace (tracing on). */
  hops?: HopTable;
}

export interface MachineInfo {
  hostname: string;
  cpuModel: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  loadAverageAtStart: [number, number, number];
  node: string;
  versions: Record<string, string>;
}

export interface BenchReport {
  schema: 1;
  startedAt: string;
  finishedAt: string;
  commandLine: string;
  suite: 'standard' | 'quick' | 'fleet' | 'custom' | 'target';
  settings: {
    durationS: number;
    repeats: number;
    warmupPerWorker: number;
    /** Absent in reports written before it was an option (they ran SANDBOX_CODE_ONLY). */
    executionMode?: string;
    connections: number | null;
  };
  target: string | null;
  machine: MachineInfo;
  services: {
    postgres: string;
    redis: string;
    s3: string;
    /** `--latency`: the proxies the `-net` scenarios reached the stores through. */
    network?: string;
    measured: string[];
    notMeasured: string[];
  };
  scenarios: ScenarioResult[];
  /**
   * `--baseline`: the same scenarios run by another commit's processes, each repeat alternating
   * with this tree's (baseline first) on the same stores. `scenarios` above are this tree's.
   */
  baseline?: {
    ref: string;
    sha: string;
    /** What the measured side was: HEAD, and whether the work tree had changes on top of it. */
    tree: { sha: string; dirty: boolean };
    /** What only this tree's side ran with (--tree-execution-mode, --tree-hops). */
    treeSide?: { executionMode?: string; traced?: boolean };
    scenarios: ScenarioResult[];
  };
  aborted: boolean;
}
