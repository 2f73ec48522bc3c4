/**
 * `pnpm bench`: builds flowbox, starts its stores and a stack per scenario on this machine (or
 * measures --target), loads it with autocannon and writes <out>/<date>-<host>.{json,md,svg}.
 * See benchmark/README.md.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type BenchOptions, parseBenchArgs, USAGE } from './args.ts';
import { type BaselineCheckout, prepareBaseline, treeIdentity } from './baseline-checkout.ts';
import { buildFlowbox, REPO_ROOT } from './build-step.ts';
import { killProcessTrees } from './force-stop.ts';
import { textTable } from './format.ts';
import { collectMachineInfo } from './machine-info.ts';
import { writeProfileReport } from './profile-report.ts';
import { Progress } from './progress.ts';
import { RATIO_HEADERS, ratioRows } from './report-ratios.ts';
import { SUMMARY_HEADERS, summaryRow } from './report-tables.ts';
import type { BenchReport } from './result-types.ts';
import { writeResults } from './results-files.ts';
import {
  fleetSuite,
  onNetwork,
  quickSuite,
  standardSuite,
  targetSuite,
  withConnections,
} from './scenarios.ts';
import { runLocalSuite, runTargetSuite, type SuiteOutcome, targetWorkerCount } from './suite-runner.ts';

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchArgs(process.argv.slice(2), process.env, {
      cwd: process.cwd(),
      defaultOutDir: join(REPO_ROOT, 'benchmark', 'results'),
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const toolsDir = process.env.FLOWBOX_TOOLS_DIR;
  const env: Parameters<typeof runLocalSuite>[2] = {
    pathEnv: process.env.PATH,
    toolsDir,
    baseEnv: { ...process.env },
    cpuProfDir: options.cpuProfDir,
    hops: options.hops,
    treeSide: options.treeSide,
    latency: options.latency,
  };
  const progress = new Progress(process.stderr);
  const controller = new AbortController();
  const tracked = new Set<number>();
  // First Ctrl-C: stop the load and shut everything down cleanly. Second: kill and leave.
  const onSignal = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      progress.log(`${signal}: stopping everything the benchmark started (again to force)`);
      controller.abort(new Error(`stopped by ${signal}`));
      return;
    }
    killProcessTrees(tracked);
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const startedAt = new Date();
  const machine = collectMachineInfo(REPO_ROOT);
  const settings = {
    durationS: options.durationS,
    repeats: options.repeats,
    warmupPerWorker: options.warmupPerWorker,
    executionMode: options.executionMode,
  };
  let outcome: SuiteOutcome;
  let suite: BenchReport['suite'];
  let baseline: BaselineCheckout | undefined;
  try {
    if (options.target !== undefined) {
      const workers =
        options.scenarios === null ? await targetWorkerCount(options.target, options.targetWorkers) : 0;
      const scenarios = withConnections(options.scenarios ?? targetSuite(workers), options.connections);
      suite = 'target';
      outcome = await runTargetSuite(options.target, options.apiKey, scenarios, settings, {
        progress,
        signal: controller.signal,
      });
    } else {
      if (options.build) await build(progress, controller.signal);
      if (options.baseline !== undefined) {
        const cacheDir =
          process.env.FLOWBOX_BASELINES_DIR ??
          join(toolsDir ?? join(homedir(), '.cache', 'flowbox'), 'baselines');
        baseline = await prepareBaseline(REPO_ROOT, options.baseline, cacheDir, {
          signal: controller.signal,
          say: (line) => progress.log(line),
        });
        env.baseline = baseline;
      }
      const suites = { standard: standardSuite, quick: quickSuite, fleet: fleetSuite };
      const scenarios = onNetwork(
        withConnections(options.scenarios ?? suites[options.suite](), options.connections),
        options.latency !== undefined,
      );
      suite = options.scenarios !== null || options.connections !== undefined ? 'custom' : options.suite;
      outcome = await runLocalSuite(scenarios, settings, env, {
        progress,
        signal: controller.signal,
        track: (pids) => {
          for (const pid of pids) tracked.add(pid);
        },
        untrack: (pids) => {
          for (const pid of pids) tracked.delete(pid);
        },
      });
    }
  } catch (error) {
    progress.clear();
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return controller.signal.aborted ? 130 : 1;
  }
  progress.clear();

  const report: BenchReport = {
    schema: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commandLine: commandLine(process.argv),
    suite,
    settings: { ...settings, connections: options.connections ?? null },
    target: options.target ?? null,
    machine,
    services: outcome.services,
    scenarios: outcome.scenarios,
    ...(baseline === undefined || outcome.baselineScenarios === undefined
      ? {}
      : {
          baseline: {
            ref: baseline.ref,
            sha: baseline.sha,
            tree: await treeIdentity(REPO_ROOT, new AbortController().signal),
            ...(Object.keys(options.treeSide).length === 0 ? {} : { treeSide: options.treeSide }),
            scenarios: outcome.baselineScenarios,
          },
        }),
    aborted: controller.signal.aborted,
  };
  const files = await writeResults(report, options.outDir);
  process.stdout.write(`\n${textTable(SUMMARY_HEADERS, report.scenarios.map(summaryRow))}\n\n`);
  if (report.baseline !== undefined) {
    process.stdout.write(
      `Against ${report.baseline.ref} (${report.baseline.sha.slice(0, 7)}), this tree / baseline:\n${textTable(RATIO_HEADERS, ratioRows(report.baseline.scenarios, report.scenarios))}\n\n`,
    );
  }
  process.stdout.write(
    `Medians of ${settings.repeats} repeat(s), (min–max). Results:\n  ${files.md}\n  ${files.json}\n  ${files.svg}\n`,
  );
  if (options.cpuProfDir !== undefined) {
    process.stdout.write(`CPU profiles: ${await writeProfileReport(options.cpuProfDir, REPO_ROOT)}\n`);
  }
  if (controller.signal.aborted) return 130;
  return report.scenarios.some((r) => r.status !== 'ok') ? 1 : 0;
}

/** `pnpm build` (engine bundle and piece archives), as the issue asks: the benchmark measures the built program. */
async function build(progress: Progress, signal: AbortSignal): Promise<void> {
  progress.phase({ scenario: 'build', phase: 'pnpm build' });
  await buildFlowbox(signal);
}

/** The command as typed, for the report (`pnpm bench` runs `node benchmark/src/main.ts`). */
function commandLine(argv: readonly string[]): string {
  const args = argv.slice(2).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`));
  return ['pnpm bench', ...args].join(' ');
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
