import { reportFileBase, reportHeadLines, type ScriptReportHead } from '../standalone/script-run.ts';
import type { PartitionProbe } from './partition-probe.ts';
import type { ReadTiming } from './read-timings.ts';

/** One retention pass as the script saw it. */
export interface PassResult {
  runs: number;
  logs: number;
  seconds: number;
}

export interface RetentionReport extends ScriptReportHead {
  expired: number;
  kept: number;
  logObjects: number;
  seedSeconds: number;
  /** The runs table with its indexes and TOAST, before retention. */
  tableBytes: number;
  readsFull: ReadTiming[];
  passes: PassResult[];
  retentionSeconds: number;
  runsPerSecond: number;
  /** Log objects still there afterwards, of those put. */
  logsLeft: number;
  readsAfter: ReadTiming[];
  /** The copy partitioned by day, when measured. */
  partitioned: PartitionProbe | null;
}

export const reportBaseName = (report: RetentionReport): string =>
  reportFileBase(report, `retention-${report.expired}`);

const ms = (value: number) => value.toFixed(1);

export function renderRetentionReport(report: RetentionReport): string {
  const reads = (title: string, rows: ReadTiming[]) => [
    `### ${title}`,
    '',
    '| read | median ms | worst ms |',
    '|---|---:|---:|',
    ...rows.map((row) => `| ${row.name} (\`${row.path}\`) | ${ms(row.medianMs)} | ${ms(row.maxMs)} |`),
    '',
  ];
  return [
    `# Retention: ${report.expired.toLocaleString('en')} expired runs`,
    '',
    ...reportHeadLines(report),
    `- Seeded ${report.expired.toLocaleString('en')} finished runs 31–40 days old and ${report.kept.toLocaleString('en')} from the last 7 days in ${report.seedSeconds.toFixed(1)} s; the runs table then took ${(report.tableBytes / 1e9).toFixed(2)} GB; ${report.logObjects.toLocaleString('en')} of the expired runs had a real log object in S3 (the others their keys only).`,
    '',
    '## Retention (RUN_RETENTION_DAYS=30)',
    '',
    `- ${report.passes.length} pass(es), ${report.retentionSeconds.toFixed(1)} s in all: **${Math.round(report.runsPerSecond).toLocaleString('en')} runs a second** with their S3 objects; ${report.logsLeft} log object(s) left of ${report.logObjects}.`,
    '',
    '| pass | runs | logs | s |',
    '|---:|---:|---:|---:|',
    ...report.passes.map(
      (pass, i) => `| ${i + 1} | ${pass.runs} | ${pass.logs} | ${pass.seconds.toFixed(1)} |`,
    ),
    '',
    ...reads('Inspector reads, table full', report.readsFull),
    ...reads('Inspector reads, after retention', report.readsAfter),
    ...partitionLines(report.partitioned),
  ].join('\n');
}

function partitionLines(probe: PartitionProbe | null): string[] {
  if (probe === null) return [];
  return [
    '## The same rows partitioned by day (a copy, measured before retention)',
    '',
    `- ${probe.partitions} partitions (one a UTC day, one ahead, a default), copied and indexed on (id) and (created_at, id) in ${probe.copySeconds.toFixed(1)} s.`,
    `- A run by id, median of 200 prepared lookups: plain table ${ms(probe.byIdPlainMs)} ms; partitioned, id alone (every partition probed) ${ms(probe.byIdAllPartitionsMs)} ms; partitioned, id and its day (one partition) ${ms(probe.byIdPrunedMs)} ms.`,
    `- Expiry: ${probe.dropped.partitions} partitions wholly past the retention detached and dropped (${probe.dropped.rows.toLocaleString('en')} rows) in **${ms(probe.dropped.ms)} ms**.`,
    '',
  ];
}
