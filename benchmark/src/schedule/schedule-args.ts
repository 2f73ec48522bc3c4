import { parseArgs } from 'node:util';
import { intOption as int } from '../standalone/int-option.ts';
import { SCRIPT_ARG_OPTIONS, type ScriptOptions, scriptOptions } from '../standalone/script-options.ts';

/** What `pnpm bench:schedule` measures, from its command line. */
export interface ScheduleLoadOptions extends ScriptOptions {
  /** Published flows, each with an `every` schedule trigger. */
  flows: number;
  /** Their interval in seconds; under 60 lowers SCHEDULE_MIN_INTERVAL_SECONDS to it (smoke runs). */
  everyS: number;
  /** Ticks measured. */
  ticks: number;
  /** Ticks let pass after seeding before measuring (the apps' first passes over every flow). */
  warmupTicks: number;
  apps: number;
  /**
   * Warm workers running the ticks' runs. 0: nobody runs them; after each tick the script
   * marks its runs finished in Postgres, as workers elsewhere would, so the stack between
   * ticks holds no backlog and what is measured is what the schedules cost.
   */
  workers: number;
  /**
   * Flows created at a time while seeding. Keep it well under the app's DATABASE_POOL_SIZE
   * (10): a create-and-publish holds a pool client for its transaction and asks the pool for
   * another (the piece index), so as many creates as clients wait on each other for good.
   */
  seedConcurrency: number;
}

export const SCHEDULE_USAGE = `Usage: pnpm bench:schedule [options]

Publishes --flows flows scheduled every --every seconds on a local stack, lets --ticks ticks
pass, and reports how late each tick's runs were created (and started, with workers) against
the tick's time, and the CPU the apps, Redis and Postgres spent between ticks. Writes
<out>/<date>-<host>-schedules-<flows>x<every>s.{md,json}.

  --flows <n>           flows to publish (default 10000)
  --every <s>           their interval (default 60; under 60 lowers SCHEDULE_MIN_INTERVAL_SECONDS)
  --ticks <n>           ticks measured (default 5)
  --warmup-ticks <n>    ticks let pass first (default 1)
  --apps <n>            app processes (default 1); every app fires every tick
  --workers <n>         warm workers running the ticks' runs (default 0: runs are marked finished)
  --seed-concurrency <n> flows created at a time (default 4; keep under the app's DATABASE_POOL_SIZE)
  --out <dir>           where the report goes (default benchmark/results)
  --skip-build          do not run pnpm build first
  -h, --help
`;

const MAX_FLOWS = 100_000;

export function parseScheduleArgs(
  argv: readonly string[],
  defaults: { cwd: string; defaultOutDir: string },
): ScheduleLoadOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      flows: { type: 'string' },
      every: { type: 'string' },
      ticks: { type: 'string' },
      'warmup-ticks': { type: 'string' },
      apps: { type: 'string' },
      workers: { type: 'string' },
      'seed-concurrency': { type: 'string' },
      ...SCRIPT_ARG_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    flows: int(values.flows, '--flows', 10_000, 1, MAX_FLOWS),
    everyS: int(values.every, '--every', 60, 1, 3_600),
    ticks: int(values.ticks, '--ticks', 5, 1, 1_000),
    warmupTicks: int(values['warmup-ticks'], '--warmup-ticks', 1, 0, 100),
    apps: int(values.apps, '--apps', 1, 1, 16),
    workers: int(values.workers, '--workers', 0, 0, 32),
    seedConcurrency: int(values['seed-concurrency'], '--seed-concurrency', 4, 1, 64),
    ...scriptOptions(values, defaults),
  };
}
