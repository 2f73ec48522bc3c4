import { parseArgs } from 'node:util';
import { intOption as int } from '../standalone/int-option.ts';
import { SCRIPT_ARG_OPTIONS, type ScriptOptions, scriptOptions } from '../standalone/script-options.ts';

/** What `pnpm bench:retention` measures, from its command line. */
export interface RetentionLoadOptions extends ScriptOptions {
  /** Finished runs seeded past the retention (31 to 40 days old): what retention deletes. */
  expired: number;
  /** Finished runs seeded inside the retention (the last 7 days): what the reads see and it keeps. */
  kept: number;
  /** Expired runs given a real log object in S3 (the rest have their keys only). */
  logs: number;
  /** Times each read is made, for its median and worst. */
  reads: number;
  /** Also measure a copy of the table partitioned by day (lookups by id, DETACH + DROP). */
  partitions: boolean;
}

export const RETENTION_USAGE = `Usage: pnpm bench:retention [options]

Seeds finished runs into a local stack's Postgres (generate_series, 100,000 a statement), then
measures the inspector's list and stats reads with the table full, one retention pass after
another until every expired run and its S3 objects are gone (time, runs a second), and the reads
again. Before retention, unless --skip-partitions, it copies the table into one partitioned by
day and measures lookups by id (every partition probed, or the day's alone) and expiry as DETACH
+ DROP of the expired days. Writes <out>/<date>-<host>-retention-<expired>.{md,json}.

  --expired <n>   finished runs past the retention, deleted (default 1000000)
  --kept <n>      finished runs inside it, kept (default 100000)
  --logs <n>      expired runs given a real log object in S3 (default 10000)
  --reads <n>     times each read is made (default 20)
  --skip-partitions  do not measure the copy of the table partitioned by day
  --out <dir>     where the report goes (default benchmark/results)
  --skip-build    do not run pnpm build first
  -h, --help
`;

export function parseRetentionArgs(
  argv: readonly string[],
  defaults: { cwd: string; defaultOutDir: string },
): RetentionLoadOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      expired: { type: 'string' },
      kept: { type: 'string' },
      logs: { type: 'string' },
      reads: { type: 'string' },
      'skip-partitions': { type: 'boolean' },
      ...SCRIPT_ARG_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  });
  const expired = int(values.expired, '--expired', 1_000_000, 1, 100_000_000);
  return {
    expired,
    kept: int(values.kept, '--kept', 100_000, 0, 100_000_000),
    logs: int(values.logs, '--logs', Math.min(10_000, expired), 0, expired),
    reads: int(values.reads, '--reads', 20, 1, 1_000),
    partitions: values['skip-partitions'] !== true,
    ...scriptOptions(values, defaults),
  };
}
