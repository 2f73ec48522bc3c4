import { fmt, mdTable } from '../format.ts';
import { type CpuWindow, SHARED_KINDS, sharedCores } from '../standalone/cpu-window.ts';
import { reportFileBase, reportHeadLines, type ScriptReportHead } from '../standalone/script-run.ts';
import { ascending, percentile } from '../stats.ts';
import type { ScheduleLoadOptions } from './schedule-args.ts';
import type { LagSummary, TickRecord } from './tick-stats.ts';

/** The issue's targets: tick runs within 1 s of their time at p99; under 5 % of a core between ticks. */
export const TICK_LAG_TARGET_MS = 1_000;
export const BETWEEN_TICKS_TARGET_CORES = 0.05;

export interface ScheduleTickResult {
  record: TickRecord;
  /**
   * Seconds from the tick's time until every flow's tick was recorded (with workers: and every
   * run of it final; without: and its runs marked finished); null when that took the whole interval.
   */
  burstS: number | null;
  /** The whole interval from this tick to the next (less a guard before the next). */
  interval: CpuWindow;
  /** From the tick's work done to just before the next tick; null when the work took the interval. */
  between: CpuWindow | null;
  betweenRedisCommandsPerS: number | null;
  betweenPostgresStatementsPerS: number | null;
}

export interface ScheduleReport extends ScriptReportHead {
  options: Omit<ScheduleLoadOptions, 'outDir' | 'help'>;
  /** Seconds the flows took to create and publish. */
  seedS: number;
  ticks: ScheduleTickResult[];
}

export function reportBaseName(report: Pick<ScheduleReport, 'startedAt' | 'machine' | 'options'>): string {
  return reportFileBase(report, `schedules-${report.options.flows}x${report.options.everyS}s`);
}

const pct = (cores: number | undefined) => (cores === undefined ? '–' : `${fmt(cores * 100, 1)} %`);
const lag = (summary: LagSummary | null) =>
  summary === null ? '–' : `${fmt(summary.p50, 0)} / ${fmt(summary.p99, 0)} / ${fmt(summary.max, 0)}`;

export function renderScheduleReport(report: ScheduleReport): string {
  const { options, ticks } = report;
  const p99s = ticks.flatMap((t) => (t.record.created === null ? [] : [t.record.created.p99]));
  const worstP99 = p99s.length === 0 ? null : Math.max(...p99s);
  const betweens = ascending(ticks.flatMap((t) => (t.between === null ? [] : [sharedCores(t.between)])));
  const overran = ticks.filter((t) => t.between === null).length;
  const worstBetween = betweens.length === 0 ? null : (betweens[betweens.length - 1] ?? null);
  const verdict = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : '**missed**');
  const fired = ticks.reduce((sum, t) => sum + (t.record.outcomes.fired ?? 0), 0);
  const expected = options.flows * ticks.length;
  const workers =
    options.workers === 0
      ? "0 workers: nobody runs the ticks' runs; after each tick the script marks them finished in Postgres (as workers elsewhere would), so no backlog is left between ticks; their jobs stay in Redis's wait list"
      : `${options.workers} warm worker${options.workers > 1 ? 's' : ''} run the ticks' runs`;
  const lines = [
    `# Schedules: ${fmt(options.flows, 0)} flows every ${options.everyS} s`,
    '',
    ...reportHeadLines(report),
    `- Stack: ${options.apps} app${options.apps > 1 ? 's' : ''} (every app fires every tick; the tick's row lets one create the run), ${workers}. ${report.services.postgres}, ${report.services.redis}, ${report.services.s3}.`,
    `- ${fmt(options.flows, 0)} flows (\`schedule\` piece, \`every\` ${options.everyS} s, one code step) created and published through the API in ${fmt(report.seedS, 1)} s; ${options.warmupTicks} tick${options.warmupTicks === 1 ? '' : 's'} let pass, then ${ticks.length} measured${options.everyS < 60 ? `; SCHEDULE_MIN_INTERVAL_SECONDS=${options.everyS}` : ''}.`,
    `- Runs fired: ${fmt(fired, 0)} of ${fmt(expected, 0)} (flows × ticks).`,
    '',
    '## Targets',
    '',
    mdTable(
      ['target', 'measured', ''],
      [
        [
          "a tick's runs created within 1 s of its time, p99",
          worstP99 === null ? '–' : `${fmt(worstP99, 0)} ms (worst tick's p99)`,
          verdict(worstP99 === null ? null : worstP99 <= TICK_LAG_TARGET_MS),
        ],
        [
          'apps + Redis + Postgres between ticks, under 5 % of one core',
          worstBetween === null
            ? "no window: the ticks' work took every interval"
            : `${pct(worstBetween)} (worst tick), median ${pct(percentile(betweens, 50))}${overran > 0 ? `; ${overran} tick(s) had no window` : ''}`,
          verdict(worstBetween === null ? null : worstBetween < BETWEEN_TICKS_TARGET_CORES && overran === 0),
        ],
      ],
      '---',
    ),
    '',
    '## Ticks',
    '',
    "Lag: the run's `created_at` (written in the statement that records the tick) and `started_at` (a worker picked it) minus the tick's time, from Postgres. *Done after*: from the tick's time until every flow's tick was recorded" +
      (options.workers === 0 ? ' and its runs marked finished' : ' and every run of it was final') +
      '. *Between*: from then until 0.2 s before the next tick; CPU from /proc (utime+stime of each process and its reaped children), in % of one core.',
    '',
    mdTable(
      [
        'tick',
        'fired',
        'skipped',
        'missed',
        'created lag p50 / p99 / max ms',
        'started lag p50 / p99 / max ms',
        'done after s',
        'between s',
        'between: app / Redis / Postgres',
        'between: sum',
        'whole interval: sum',
        'between: Redis cmd/s',
        'between: Postgres stmt/s',
      ],
      ticks.map((t) => [
        t.record.scheduledAt.slice(11, 19),
        fmt(t.record.outcomes.fired ?? 0, 0),
        fmt(t.record.outcomes.skipped ?? 0, 0),
        fmt(t.record.outcomes.missed ?? 0, 0),
        lag(t.record.created),
        lag(t.record.started),
        t.burstS === null ? 'overran' : fmt(t.burstS, 2),
        t.between === null ? '–' : fmt(t.between.seconds, 1),
        t.between === null ? '–' : SHARED_KINDS.map((kind) => pct(t.between?.cores[kind])).join(' / '),
        t.between === null ? '–' : pct(sharedCores(t.between)),
        pct(sharedCores(t.interval)),
        fmt(t.betweenRedisCommandsPerS, 1),
        fmt(t.betweenPostgresStatementsPerS, 1),
      ]),
    ),
    '',
    '## CPU per process kind over each whole interval',
    '',
    mdTable(
      ['tick', 'app', 'worker', 'engine', 'Redis', 'Postgres', 'S3', 'this script'],
      ticks.map((t) => [
        t.record.scheduledAt.slice(11, 19),
        pct(t.interval.cores.app),
        pct(t.interval.cores.worker),
        pct(t.interval.cores.engine),
        pct(t.interval.cores.redis),
        pct(t.interval.cores.postgres),
        pct(t.interval.cores.s3),
        pct(t.interval.cores.loadgen),
      ]),
    ),
    '',
  ];
  return lines.join('\n');
}
