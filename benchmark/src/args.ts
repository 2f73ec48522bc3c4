import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type ExecutionMode, ExecutionModeSchema } from '@flowbox/protocol';
import { type NetworkLatency, parseLatency } from './network.ts';
import { parseScenarioName, type Scenario } from './scenarios.ts';

export type SuiteName = 'standard' | 'quick' | 'fleet';

/** `--tree-execution-mode`, `--tree-hops`: set on this tree's side of a `--baseline` run only. */
export interface TreeSide {
  executionMode?: ExecutionMode;
  traced?: boolean;
}

export interface BenchOptions {
  /** --suite (or --quick): the scenarios run when none is named. */
  suite: SuiteName;
  quick: boolean;
  /** Scenarios named with --scenario; null means the suite's own. */
  scenarios: Scenario[] | null;
  durationS: number;
  repeats: number;
  /** --connections: overrides every scenario's connection count. */
  connections: number | undefined;
  /** Requests per worker sent before measuring, so caches are filled and engines booted. */
  warmupPerWorker: number;
  /** An already running deployment; the runner then starts nothing. */
  target: string | undefined;
  apiKey: string | undefined;
  /** The deployment's worker count (--workers); asked from /health/ready when unset. */
  targetWorkers: number | undefined;
  outDir: string;
  build: boolean;
  /** The workers' EXECUTION_MODE (default SANDBOX_CODE_ONLY, the worker's own default). */
  executionMode: ExecutionMode;
  /** --cpu-prof: where app, worker and engine processes write V8 CPU profiles (local stacks only). */
  cpuProfDir: string | undefined;
  /** --hops: trace every run and report where each request's milliseconds went, hop by hop. */
  hops: boolean;
  /** --baseline: a git ref whose build runs every scenario alternately with this tree's. */
  baseline: string | undefined;
  /**
   * What only this tree's side changes, against a baseline (`--baseline HEAD` measures a
   * setting's cost at one commit): its workers' EXECUTION_MODE, and tracing (`--tree-hops`).
   */
  treeSide: TreeSide;
  /**
   * --latency: the one-way delays `-net` scenarios pay to each store; given without any `-net`
   * scenario, every scenario runs on that network.
   */
  latency: NetworkLatency | undefined;
  help: boolean;
}

export const USAGE = `Usage: pnpm bench [options]

Runs flowbox's benchmark suite against a stack it starts on this machine (or against --target)
and writes <out>/<date>-<host>[-quick].{json,md,svg}.

  --quick                 the short suite (4 scenarios, 2 s x 3 repeats; under 2 minutes); same as --suite quick
  --suite <name>          standard (default) | quick | fleet (simulated workers: the reference's 40-160 worker
                          table at 1:10, its 1:20 pairs, one app under a growing fleet, 1,000 idle workers)
  --scenario <name>       run only this scenario; repeatable. Names: <mode>-<apps>a<workers>w-c<connections>
                          with mode warm | cold-prewarm | cold (target with --target), e.g. warm-1a2w-c2;
                          add -r<n> for a fixed rate of n requests per second in all, e.g. cold-prewarm-1a1w-c4-r5
  --duration <s>          seconds of load per repeat (default 10, quick 2)
  --repeats <n>           measured repeats per scenario (default 3)
  --connections <n>       load connections for every scenario (default: the scenario's)
  --warmup <n>            warm-up requests per worker before measuring (default 50, quick 10; cold
                          modes take at most 10)
  --target <url>          measure a running deployment (e.g. http://<app-service>); starts nothing
  --api-key <key>         its API key for /v1/runs (default: $FLOWBOX_API_KEY)
  --workers <n>           its worker count, for per-worker figures (default: asked from /health/ready)
  --out <dir>             where the result files go (default benchmark/results)
  --skip-build            do not run \`pnpm build\` first (the engine bundle and piece archives must exist)
  --execution-mode <m>    the workers' EXECUTION_MODE: SANDBOX_CODE_ONLY (default) | SANDBOXED | UNSANDBOXED
  --cpu-prof <dir>        profile every app, worker and engine process (V8 --cpu-prof) and write a
                          flame graph and a top-functions table per process kind and scenario into <dir>
  --baseline <git-ref>    also run every scenario on <git-ref> (checked out and built in a worktree
                          under ~/.cache/flowbox/baselines), alternating with this tree repeat by repeat
                          on the same stores, and report both with their ratio
  --tree-execution-mode <m>  with --baseline: this tree's workers run in <m>, the baseline's in
                          --execution-mode (with --baseline HEAD: what a mode costs at one commit)
  --tree-hops             with --baseline: only this tree's side runs traced, with its hop table
                          (with --baseline HEAD: what tracing costs)
  --latency <spec>        one-way delays to the stores for -net scenarios, e.g. s3=20,pg=1,redis=0.5 (the
                          default); toxiproxy in front of each store (built with Go on first use). Without
                          a -net scenario named, every scenario runs on that network
  --hops                  run the stack with tracing on (to a receiver in the runner) and report, per
                          scenario, where a request's milliseconds go hop by hop (tracing's cost included)
  -h, --help              this text
`;

const DEFAULTS = { standard: { durationS: 10, warmup: 50 }, quick: { durationS: 2, warmup: 10 }, repeats: 3 };

/** Parses the command line once; throws an Error whose message is fit for the terminal. */
export function parseBenchArgs(
  argv: readonly string[],
  env: { FLOWBOX_API_KEY?: string | undefined },
  paths: { cwd: string; defaultOutDir: string },
): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      suite: { type: 'string' },
      scenario: { type: 'string', multiple: true },
      duration: { type: 'string' },
      repeats: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      target: { type: 'string' },
      'api-key': { type: 'string' },
      workers: { type: 'string' },
      out: { type: 'string' },
      'skip-build': { type: 'boolean', default: false },
      'execution-mode': { type: 'string' },
      'cpu-prof': { type: 'string' },
      baseline: { type: 'string' },
      hops: { type: 'boolean', default: false },
      'tree-execution-mode': { type: 'string' },
      'tree-hops': { type: 'boolean', default: false },
      latency: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const suite = suiteName(values.suite, values.quick === true);
  const quick = suite === 'quick';
  const defaults = quick ? DEFAULTS.quick : DEFAULTS.standard;
  const target = values.target === undefined ? undefined : parseTarget(values.target);
  const scenarios = values.scenario === undefined ? null : values.scenario.map(parseScenarioName);
  for (const s of scenarios ?? []) {
    if ((target !== undefined) !== (s.mode === 'target')) {
      throw new Error(
        target === undefined
          ? `scenario ${s.name}: mode target needs --target <url>`
          : `scenario ${s.name}: with --target the deployment decides the mode; name scenarios target-<apps>a<workers>w-c<connections>`,
      );
    }
  }
  const apiKey = values['api-key'] ?? env.FLOWBOX_API_KEY;
  return {
    suite,
    quick,
    scenarios,
    durationS: number('--duration', values.duration, defaults.durationS, { min: 0.5, max: 3600 }),
    repeats: integer('--repeats', values.repeats, DEFAULTS.repeats, { min: 1, max: 100 }),
    connections:
      values.connections === undefined
        ? undefined
        : integer('--connections', values.connections, 1, { min: 1, max: 1024 }),
    warmupPerWorker: integer('--warmup', values.warmup, defaults.warmup, { min: 0, max: 100_000 }),
    target,
    apiKey: apiKey === '' ? undefined : apiKey,
    targetWorkers:
      values.workers === undefined
        ? undefined
        : integer('--workers', values.workers, 1, { min: 1, max: 100_000 }),
    outDir: resolve(paths.cwd, values.out ?? paths.defaultOutDir),
    build: values['skip-build'] !== true,
    executionMode: executionMode(values['execution-mode'], target),
    cpuProfDir: cpuProfDir(values['cpu-prof'], target, paths.cwd),
    baseline: baselineRef(values.baseline, target, values['cpu-prof']),
    hops: hopsFlag(values.hops === true, target),
    treeSide: treeSide(values['tree-execution-mode'], values['tree-hops'] === true, values),
    latency: latencyOption(values.latency, target),
    help: values.help === true,
  };
}

function cpuProfDir(raw: string | undefined, target: string | undefined, cwd: string): string | undefined {
  if (raw === undefined) return undefined;
  if (target !== undefined)
    throw new Error('--cpu-prof: with --target the processes are not ours to profile');
  return resolve(cwd, raw);
}

function latencyOption(raw: string | undefined, target: string | undefined): NetworkLatency | undefined {
  if (raw === undefined) return undefined;
  if (target !== undefined) throw new Error("--latency: with --target the network is the deployment's own");
  return parseLatency(raw);
}

function hopsFlag(hops: boolean, target: string | undefined): boolean {
  if (hops && target !== undefined)
    throw new Error("--hops: with --target the spans go to the deployment's collector");
  return hops;
}

function treeSide(
  mode: string | undefined,
  traced: boolean,
  values: { baseline?: string | undefined; hops?: boolean | undefined },
): TreeSide {
  if ((mode !== undefined || traced) && values.baseline === undefined)
    throw new Error(
      '--tree-execution-mode and --tree-hops set one side of a --baseline run: name the baseline',
    );
  if (traced && values.hops === true)
    throw new Error('--tree-hops traces this side only; --hops traces both');
  return {
    ...(mode === undefined ? {} : { executionMode: executionMode(mode, undefined, '--tree-execution-mode') }),
    ...(traced ? { traced } : {}),
  };
}

function suiteName(raw: string | undefined, quick: boolean): SuiteName {
  if (raw === undefined) return quick ? 'quick' : 'standard';
  if (raw !== 'standard' && raw !== 'quick' && raw !== 'fleet')
    throw new Error(`--suite must be one of standard, quick, fleet; got "${raw}"`);
  if (quick && raw !== 'quick') throw new Error(`--quick and --suite ${raw} name two suites`);
  return raw;
}

function baselineRef(raw: string | undefined, target: string | undefined, cpuProf: string | undefined) {
  if (raw === undefined) return undefined;
  if (target !== undefined)
    throw new Error('--baseline: with --target there is only the deployment to measure');
  if (cpuProf !== undefined)
    throw new Error('--baseline: profile one side at a time (--cpu-prof without --baseline)');
  if (!/^[\w./~^@{}-]+$/.test(raw) || raw.startsWith('-'))
    throw new Error(`--baseline: "${raw}" is not a git ref`);
  return raw;
}

function executionMode(
  raw: string | undefined,
  target: string | undefined,
  flag = '--execution-mode',
): ExecutionMode {
  if (raw === undefined) return 'SANDBOX_CODE_ONLY';
  if (target !== undefined) throw new Error(`${flag}: with --target the deployment decides the mode`);
  const parsed = ExecutionModeSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`${flag} must be one of ${ExecutionModeSchema.options.join(', ')}`);
  return parsed.data;
}

function parseTarget(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`--target: "${raw}" is not a URL (expected e.g. http://flowbox-app)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`--target: only http:// and https:// URLs are supported, got ${url.protocol}`);
  }
  return url.toString().replace(/\/+$/, '');
}

function number(
  flag: string,
  raw: string | undefined,
  fallback: number,
  range: { min: number; max: number },
) {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < range.min || value > range.max) {
    throw new Error(`${flag}: expected a number from ${range.min} to ${range.max}, got "${raw}"`);
  }
  return value;
}

function integer(
  flag: string,
  raw: string | undefined,
  fallback: number,
  range: { min: number; max: number },
) {
  const value = number(flag, raw, fallback, range);
  if (!Number.isInteger(value)) throw new Error(`${flag}: expected a whole number, got "${raw}"`);
  return value;
}
