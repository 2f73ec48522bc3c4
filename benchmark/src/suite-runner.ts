import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StackEntries } from '@flowbox/dev';
import { defaultToolsDir, startOtlpReceiver } from '@flowbox/local-services';
import { summarizeScenario } from './aggregate.ts';
import type { TreeSide } from './args.ts';
import type { BaselineCheckout } from './baseline-checkout.ts';
import { hopTable } from './hops.ts';
import {
  DEFAULT_LATENCY,
  describeLatency,
  type Network,
  type NetworkLatency,
  startNetwork,
} from './network.ts';
import {
  OBSERVER_ROLE,
  openPostgresProbe,
  type PostgresProbe,
  withUserAndDatabase,
} from './postgres-stats.ts';
import { clockTicksPerSecond } from './proc-stats.ts';
import type { Progress } from './progress.ts';
import { openRedisProbe } from './redis-stats.ts';
import type { BenchReport, ScenarioResult } from './result-types.ts';
import { connectedWorkers } from './runs-api.ts';
import { type MeasureContext, type RunSettings, runScenario } from './scenario-runner.ts';
import type { Scenario } from './scenarios.ts';
import { startServices } from './services.ts';
import { startScenarioStack } from './stack-runner.ts';

export interface SuiteOutcome {
  scenarios: ScenarioResult[];
  /** With `--baseline`: the same scenarios run by the baseline's processes, alternating with ours. */
  baselineScenarios?: ScenarioResult[];
  services: BenchReport['services'];
}

interface SuiteDeps {
  progress: Progress;
  signal: AbortSignal;
  /** Every process the runner starts is registered here, for a forced stop. */
  track: (pids: readonly number[]) => void;
  untrack: (pids: readonly number[]) => void;
}

/** Starts the stores once, then a stack per scenario; stops everything it started, also on abort. */
export async function runLocalSuite(
  scenarios: readonly Scenario[],
  settings: RunSettings,
  env: {
    pathEnv: string | undefined;
    toolsDir: string | undefined;
    baseEnv: Record<string, string | undefined>;
    /** --cpu-prof: each scenario's processes write their profiles into `<cpuProfDir>/<scenario>`. */
    cpuProfDir?: string | undefined;
    /** --baseline: each repeat runs once on the baseline's processes, then once on ours (A B A B …). */
    baseline?: BaselineCheckout | undefined;
    /** --hops: trace every run and add the hop table (tracing's cost included in every figure). */
    hops?: boolean | undefined;
    /** --tree-execution-mode, --tree-hops: what this tree's side of a --baseline run changes. */
    treeSide?: TreeSide | undefined;
    /** --latency: the delays `-net` scenarios pay (default DEFAULT_LATENCY). */
    latency?: NetworkLatency | undefined;
  },
  deps: SuiteDeps,
): Promise<SuiteOutcome> {
  const { progress, signal } = deps;
  const root = await mkdtemp(join(tmpdir(), 'flowbox-bench-'));
  const results: ScenarioResult[] = [];
  const ticksPerSecond = clockTicksPerSecond();
  try {
    progress.phase({
      scenarioCount: scenarios.length,
      scenario: 'stores',
      phase: 'starting Postgres, Redis, S3',
    });
    const services = await startServices({ root, ...env });
    const servicePids = [...services.roots.postgres, ...services.roots.redis, ...services.roots.s3];
    deps.track(servicePids);
    const redis = await openRedisProbe(services.redisUrl);
    let network: Network | null = null;
    if (scenarios.some((s) => s.network === true)) {
      progress.phase({ scenario: 'stores', phase: 'starting the latency proxies' });
      network = await startNetwork(services, env.latency ?? DEFAULT_LATENCY, {
        pathEnv: env.pathEnv,
        toolsDir: env.toolsDir ?? defaultToolsDir(),
      });
      deps.track(network.pid === undefined ? [] : [network.pid]);
    }
    const description = {
      ...services.description,
      ...(network === null ? {} : { network: `${describeLatency(network.latency)}; for the -net scenarios` }),
      redis: `Redis ${await redis.version()}`,
      ...measuredLists(
        services.database.kind === 'postgres' && services.database.hasStatements,
        services.database.kind,
      ),
    };
    const baselineResults: ScenarioResult[] = [];
    try {
      // Every stack gets its own database, whichever side it runs.
      let stackIndex = 0;
      const runOne = (scenario: Scenario, runSettings: RunSettings, side: 'baseline' | 'tree' | null) => {
        const label = side === 'baseline' ? `${scenario.name} (baseline)` : scenario.name;
        progress.phase({ scenario: label, phase: 'starting stack' });
        const tree = side === 'tree' ? (env.treeSide ?? {}) : {};
        return runOneLocal(scenario, stackIndex++, {
          services: scenario.network === true && network !== null ? network.over(services) : services,
          redis,
          root,
          settings: { ...runSettings, executionMode: tree.executionMode ?? runSettings.executionMode },
          env,
          entries: side === 'baseline' ? env.baseline?.entries : undefined,
          hops: env.hops === true || tree.traced === true,
          deps,
          ticksPerSecond,
          onProgress: progressReporter(progress),
        });
      };
      for (const [index, scenario] of scenarios.entries()) {
        if (signal.aborted) break;
        progress.phase({ scenarioIndex: index + 1, scenario: scenario.name, phase: 'starting' });
        if (env.baseline === undefined) {
          results.push(await runOne(scenario, settings, null));
          continue;
        }
        // One repeat per stack, alternating, so drift in the machine's speed falls on both sides.
        const once = { ...settings, repeats: 1 };
        const runs: Record<'baseline' | 'tree', ScenarioResult[]> = { baseline: [], tree: [] };
        for (let repeat = 0; repeat < settings.repeats && !signal.aborted; repeat++) {
          runs.baseline.push(await runOne(scenario, once, 'baseline'));
          runs.tree.push(await runOne(scenario, once, 'tree'));
        }
        baselineResults.push(mergeRuns(scenario, runs.baseline));
        results.push(mergeRuns(scenario, runs.tree));
      }
    } finally {
      progress.phase({ scenario: 'stores', phase: 'stopping' });
      await network?.close();
      await redis.close();
      await services.close();
      deps.untrack(servicePids);
    }
    return {
      scenarios: results,
      ...(env.baseline === undefined ? {} : { baselineScenarios: baselineResults }),
      services: description,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `--hops`: the stack runs with tracing on, exporting to a receiver here; its spans make the hop table. */
async function runOneLocal(
  scenario: Scenario,
  index: number,
  c: Parameters<typeof runOneStack>[2] & { hops: boolean },
): Promise<ScenarioResult> {
  if (!c.hops) return runOneStack(scenario, index, c);
  const receiver = await startOtlpReceiver();
  try {
    const result = await runOneStack(scenario, index, { ...c, tracingEndpoint: receiver.url });
    // The stack is closed: apps and workers flushed their last spans on SIGTERM.
    const since = result.repeats[0]?.startedAt;
    if (since === undefined) return result;
    return { ...result, hops: hopTable(receiver.spans, Date.parse(since)) };
  } finally {
    await receiver.close();
  }
}

async function runOneStack(
  scenario: Scenario,
  index: number,
  c: {
    services: Awaited<ReturnType<typeof startServices>>;
    redis: Awaited<ReturnType<typeof openRedisProbe>>;
    root: string;
    settings: RunSettings;
    env: { baseEnv: Record<string, string | undefined>; cpuProfDir?: string | undefined };
    entries: StackEntries | undefined;
    tracingEndpoint?: string | undefined;
    deps: SuiteDeps;
    ticksPerSecond: number;
    onProgress: MeasureContext['onProgress'];
  },
): Promise<ScenarioResult> {
  const { signal } = c.deps;
  let stack: Awaited<ReturnType<typeof startScenarioStack>> | null = null;
  let postgres: PostgresProbe | null = null;
  let stackPids: number[] = [];
  try {
    stack = await startScenarioStack({
      services: c.services,
      scenario,
      index,
      root: c.root,
      baseEnv: c.env.baseEnv,
      executionMode: c.settings.executionMode,
      cpuProfDir: c.env.cpuProfDir === undefined ? undefined : join(c.env.cpuProfDir, scenario.name),
      entries: c.entries,
      tracingEndpoint: c.tracingEndpoint,
      signal,
    });
    stackPids = [...(stack.roots.app ?? []), ...(stack.roots.worker ?? [])];
    c.deps.track(stackPids);
    const database = c.services.database;
    if (database.kind === 'postgres') {
      postgres = await openPostgresProbe({
        observerAdminUrl: withUserAndDatabase(database.adminUrl, OBSERVER_ROLE, 'postgres'),
        observerAppUrl: withUserAndDatabase(database.adminUrl, OBSERVER_ROLE, stack.database.name),
        appDatabase: stack.database.name,
        appRole: new URL(database.adminUrl).username || 'postgres',
        hasStatements: database.hasStatements,
      });
    }
    const measured = await runScenario(
      {
        appUrls: stack.appUrls,
        apiKey: stack.apiKey,
        roots: stack.roots,
        redis: c.redis,
        postgres,
        logCounts: stack.logCounts,
        ticksPerSecond: c.ticksPerSecond,
        signal,
        onProgress: c.onProgress,
      },
      scenario,
      c.settings,
    );
    return {
      scenario,
      status: signal.aborted ? 'aborted' : 'ok',
      ...measured,
      summary: summarizeScenario(scenario, measured.repeats),
    };
  } catch (error) {
    const recent = stack?.recentLines() ?? '';
    const message = error instanceof Error ? error.message : String(error);
    if (!signal.aborted)
      c.deps.progress.log(`${scenario.name} failed: ${message}${recent === '' ? '' : `\n${recent}`}`);
    return {
      scenario,
      status: signal.aborted ? 'aborted' : 'failed',
      error: message,
      warmup: null,
      idle: null,
      repeats: [],
      summary: null,
    };
  } finally {
    c.onProgress('stopping stack', null, '');
    await postgres?.close();
    await stack?.close();
    c.deps.untrack(stackPids);
    // The next scenario starts from empty queues.
    await c.redis.flushAll().catch(() => {});
  }
}

/** Single-repeat runs of one scenario as one result: repeats in order, the first run's warm-up and idle rates. */
export function mergeRuns(scenario: Scenario, runs: readonly ScenarioResult[]): ScenarioResult {
  const repeats = runs.flatMap((r) => r.repeats).map((r, index) => ({ ...r, index }));
  const notOk = runs.find((r) => r.status !== 'ok');
  const first = runs[0];
  return {
    scenario,
    status: notOk?.status ?? (first === undefined ? 'aborted' : 'ok'),
    ...(notOk?.error === undefined ? {} : { error: notOk.error }),
    warmup: first?.warmup ?? null,
    idle: first?.idle ?? null,
    repeats,
    summary: summarizeScenario(scenario, repeats),
  };
}

function measuredLists(hasStatements: boolean, database: 'postgres' | 'pglite') {
  const measured = [
    'client latency and throughput (autocannon)',
    'CPU and peak RSS per process kind (/proc)',
    'Redis commands and round trips (INFO commandstats / stats)',
    'run timings (GET /v1/runs)',
  ];
  const notMeasured: string[] = [];
  if (database === 'pglite') notMeasured.push('Postgres statements (PGlite has no statistics views)');
  else if (hasStatements)
    measured.push('Postgres statements (pg_stat_statements) and transactions (pg_stat_database)');
  else {
    measured.push('Postgres transactions (pg_stat_database)');
    notMeasured.push('Postgres statements (pg_stat_statements is not installed)');
  }
  return { measured, notMeasured };
}

/** Against a running deployment: load, latency and the runs' timings only. */
export async function runTargetSuite(
  target: string,
  apiKey: string | undefined,
  scenarios: readonly Scenario[],
  settings: RunSettings,
  deps: Pick<SuiteDeps, 'progress' | 'signal'>,
): Promise<SuiteOutcome> {
  const results: ScenarioResult[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    if (deps.signal.aborted) break;
    deps.progress.phase({
      scenarioIndex: index + 1,
      scenarioCount: scenarios.length,
      scenario: scenario.name,
      phase: 'starting',
    });
    try {
      const measured = await runScenario(
        {
          appUrls: [target],
          apiKey: apiKey ?? null,
          roots: null,
          redis: null,
          postgres: null,
          logCounts: () => ({ warn: 0, error: 0, byMessage: new Map() }),
          ticksPerSecond: 100,
          signal: deps.signal,
          onProgress: progressReporter(deps.progress),
        },
        scenario,
        settings,
      );
      results.push({
        scenario,
        status: deps.signal.aborted ? 'aborted' : 'ok',
        ...measured,
        summary: summarizeScenario(scenario, measured.repeats),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!deps.signal.aborted) deps.progress.log(`${scenario.name} failed: ${message}`);
      results.push({
        scenario,
        status: deps.signal.aborted ? 'aborted' : 'failed',
        error: message,
        warmup: null,
        idle: null,
        repeats: [],
        summary: null,
      });
    }
  }
  const measured = ['client latency and throughput (autocannon)'];
  const notMeasured = [
    'CPU and memory per process (the processes are not on this machine)',
    'Redis and Postgres counters',
  ];
  if (apiKey === undefined) notMeasured.push('run timings (no --api-key or FLOWBOX_API_KEY)');
  else measured.push('run timings (GET /v1/runs)');
  return {
    scenarios: results,
    services: {
      postgres: "the deployment's Postgres",
      redis: "the deployment's Redis",
      s3: "the deployment's S3",
      measured,
      notMeasured,
    },
  };
}

/** The deployment's worker count: --workers, else what the answering app instance reports. */
export async function targetWorkerCount(target: string, given: number | undefined): Promise<number> {
  if (given !== undefined) return given;
  const workers = await connectedWorkers(target);
  if (workers === null || workers < 1) {
    throw new Error(
      `${target}/health/ready did not report connected workers; pass --workers <n> (behind a load balancer each app instance only knows its own)`,
    );
  }
  return workers;
}

/** A new phase name starts a phase (one line when not on a terminal); the same name updates the bar. */
function progressReporter(progress: Progress): MeasureContext['onProgress'] {
  let current = '';
  return (phase, fraction, detail) => {
    if (phase !== current) {
      current = phase;
      progress.phase({ phase, fraction, detail });
    } else {
      progress.update(fraction, detail);
    }
  };
}
