import { reportFileBase, reportHeadLines, type ScriptReportHead } from '../standalone/script-run.ts';
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
  ].join('\n');
}
