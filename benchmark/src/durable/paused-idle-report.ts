import { fmt, fmtSpread, mdTable } from '../format.ts';
import type { ProcessKind } from '../proc-stats.ts';
import { type CpuWindow, sharedCores } from '../standalone/cpu-window.ts';
import { reportFileBase, reportHeadLines, type ScriptReportHead } from '../standalone/script-run.ts';
import { type Spread, summarize } from '../stats.ts';
import type { PausedIdleOptions } from './paused-idle-args.ts';

/** The issue's target: idle apps + Redis + Postgres with the paused runs within 10 % of none. */
export const IDLE_RATIO_TARGET = 1.1;
const KINDS: readonly ProcessKind[] = ['app', 'worker', 'engine', 'redis', 'postgres', 's3', 'loadgen'];

export interface IdleWindow {
  /** Paused runs during the window. */
  paused: number;
  whole: CpuWindow;
  /** The window read in equal parts: the spread of each figure. */
  parts: CpuWindow[];
  redisCommandsPerS: number;
  postgresStatementsPerS: number | null;
  redisUsedMemoryMb: number;
}

export interface PausedIdleReport extends ScriptReportHead {
  options: Omit<PausedIdleOptions, 'outDir' | 'help'>;
  /** Seconds from the first webhook until every run was PAUSED. */
  createS: number | null;
  /** Unanswered waits of the paused runs and the earliest due time among them (ISO). */
  waits: { count: number; earliestDue: string | null } | null;
  /** Resume jobs in the run queue's delayed sets while the runs are paused (null: none found). */
  resumesDelayed: number | null;
  /** [none paused, the runs paused]; fewer when stopped early. */
  windows: IdleWindow[];
}

export function reportBaseName(report: Pick<PausedIdleReport, 'startedAt' | 'machine' | 'options'>): string {
  return reportFileBase(report, `paused-idle-${report.options.runs}`);
}

const pct = (cores: number | null | undefined) =>
  cores === null || cores === undefined || !Number.isFinite(cores) ? '–' : `${fmt(cores * 100, 2)} %`;

function pctSpread(spread: Spread | null): string {
  if (spread === null) return '–';
  const scaled = { ...spread, median: spread.median * 100, min: spread.min * 100, max: spread.max * 100 };
  return `${fmtSpread(scaled, 2)} %`;
}

const ratio = (a: number, b: number) => (b > 0 ? `${fmt(a / b, 2)}×` : '–');

export function renderPausedIdleReport(report: PausedIdleReport): string {
  const { options } = report;
  const [none, paused] = report.windows;
  const lines = [
    `# Paused runs at rest: ${fmt(options.runs, 0)} runs paused on a one-hour delay`,
    '',
    ...reportHeadLines(report),
    `- Stack: ${options.apps} app(s), ${options.workers} warm worker(s); ${report.services.postgres}, ${report.services.redis}, ${report.services.s3}.`,
    `- The runs: async webhooks to \`benchmark-pause1h\` (code, a 1 h delay, code, response), ${options.concurrency} in flight; all PAUSED after ${report.createS === null ? '–' : `${fmt(report.createS, 1)} s`}.${report.waits === null ? '' : ` Unanswered waits: ${fmt(report.waits.count, 0)}, the earliest due ${report.waits.earliestDue ?? '–'}.`}${report.resumesDelayed === null ? '' : ` Resume jobs delayed in Redis: ${fmt(report.resumesDelayed, 0)}.`}`,
    `- Each window: a VACUUM ANALYZE of the database, ${options.settleS} s left alone, then ${options.idleS} s measured in ${options.parts} parts (medians of the parts, (min–max)); nothing is sent to the stack meanwhile. CPU from /proc (utime+stime, reaped children included) in % of one core.`,
    '',
  ];
  if (none === undefined || paused === undefined) {
    lines.push('Stopped before both windows were measured.', '');
    return lines.join('\n');
  }
  const a = sharedCores(none.whole);
  const b = sharedCores(paused.whole);
  lines.push(
    '## Target',
    '',
    mdTable(
      ['target', 'none paused', `${fmt(paused.paused, 0)} paused`, 'ratio', ''],
      [
        [
          'apps + Redis + Postgres at rest within 10 % of a stack with none paused',
          pct(a),
          pct(b),
          ratio(b, a),
          a > 0 && b / a <= IDLE_RATIO_TARGET ? 'met' : '**missed**',
        ],
      ],
      '---',
    ),
    '',
    `The difference is ${pct(b - a)} of a core; the parts' spread below says how much of it is noise.`,
    '',
    '## Per process kind',
    '',
    mdTable(
      ['kind', 'none paused', `${fmt(paused.paused, 0)} paused`, 'ratio (whole windows)'],
      [
        ...KINDS.map((kind) => [
          kind === 'loadgen' ? 'this script' : kind,
          pctSpread(summarize(none.parts.map((p) => p.cores[kind]))),
          pctSpread(summarize(paused.parts.map((p) => p.cores[kind]))),
          ratio(paused.whole.cores[kind], none.whole.cores[kind]),
        ]),
        [
          'apps + Redis + Postgres',
          pctSpread(summarize(none.parts.map(sharedCores))),
          pctSpread(summarize(paused.parts.map(sharedCores))),
          ratio(b, a),
        ],
      ],
    ),
    '',
    mdTable(
      ['store', 'none paused', `${fmt(paused.paused, 0)} paused`],
      [
        ['Redis commands/s', fmt(none.redisCommandsPerS, 1), fmt(paused.redisCommandsPerS, 1)],
        [
          "Postgres statements/s (the apps' role)",
          fmt(none.postgresStatementsPerS, 1),
          fmt(paused.postgresStatementsPerS, 1),
        ],
        ['Redis used memory, MB', fmt(none.redisUsedMemoryMb, 1), fmt(paused.redisUsedMemoryMb, 1)],
      ],
    ),
    '',
  );
  return lines.join('\n');
}
