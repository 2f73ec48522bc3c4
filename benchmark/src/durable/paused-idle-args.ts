import { parseArgs } from 'node:util';
import { intOption as int } from '../standalone/int-option.ts';
import { SCRIPT_ARG_OPTIONS, type ScriptOptions, scriptOptions } from '../standalone/script-options.ts';

/** What `pnpm bench:paused-idle` measures, from its command line. */
export interface PausedIdleOptions extends ScriptOptions {
  /** Runs left paused on a one-hour delay. */
  runs: number;
  /** Seconds of each idle window (with none paused, then with them). */
  idleS: number;
  /** Each idle window is read in this many equal parts, for the spread. */
  parts: number;
  /** Seconds the stack is left alone (after a VACUUM ANALYZE) before each idle window. */
  settleS: number;
  apps: number;
  /** Workers that run the runs up to their pause (more create the paused runs sooner). */
  workers: number;
  /** Async webhooks in flight while creating the runs. */
  concurrency: number;
}

export const PAUSED_IDLE_USAGE = `Usage: pnpm bench:paused-idle [options]

Measures what paused runs cost while they wait: the idle CPU of the apps, Redis and Postgres
(and the rest) with no paused run, then with --runs runs paused on a one-hour delay, on the
same stack. Writes <out>/<date>-<host>-paused-idle-<runs>.{md,json}.

  --runs <n>          runs left paused (default 10000)
  --idle <s>          seconds of each idle window (default 60)
  --parts <n>         parts each window is read in, for the spread (default 6)
  --settle <s>        seconds left alone before each window, after a VACUUM ANALYZE (default 20)
  --apps <n>          app processes (default 1)
  --workers <n>       warm workers that run the runs up to their pause (default 2)
  --concurrency <n>   async webhooks in flight while creating them (default 32)
  --out <dir>         where the report goes (default benchmark/results)
  --skip-build        do not run pnpm build first
  -h, --help
`;

export function parsePausedIdleArgs(
  argv: readonly string[],
  defaults: { cwd: string; defaultOutDir: string },
): PausedIdleOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      runs: { type: 'string' },
      idle: { type: 'string' },
      parts: { type: 'string' },
      settle: { type: 'string' },
      apps: { type: 'string' },
      workers: { type: 'string' },
      concurrency: { type: 'string' },
      ...SCRIPT_ARG_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    runs: int(values.runs, '--runs', 10_000, 1, 200_000),
    idleS: int(values.idle, '--idle', 60, 1, 3_600),
    parts: int(values.parts, '--parts', 6, 1, 60),
    settleS: int(values.settle, '--settle', 20, 0, 600),
    apps: int(values.apps, '--apps', 1, 1, 16),
    workers: int(values.workers, '--workers', 2, 1, 32),
    concurrency: int(values.concurrency, '--concurrency', 32, 1, 1_000),
    ...scriptOptions(values, defaults),
  };
}
