import {
  BENCHMARK_DELAY_FLOW_ID,
  BENCHMARK_FLOW_ID,
  BENCHMARK_LOOP_FLOW_ID,
  BENCHMARK_NODELAY_FLOW_ID,
  BENCHMARK_PAUSE_FLOW_ID,
  BENCHMARK_ROUTER_FLOW_ID,
} from '@flowbox/protocol';

/**
 * Glossary
 * - mode: how the workers supply engines. `warm`: one engine serves job after job
 *   (REUSE_SANDBOX=true). `cold-prewarm`: a fresh engine for every job, booted while the worker
 *   is idle (REUSE_SANDBOX=false, PREWARM=true). `cold`: a fresh engine booted for every job on
 *   the request's path (PREWARM=false). `isolate`: one engine serves job after job, each job in
 *   a fresh V8 isolate of its own (RUN_ISOLATION=isolate). `target`: whatever the deployment
 *   under --target runs.
 * - scenario: a mode with a number of app and worker processes and of load connections, named
 *   `<mode>-<apps>a<workers>w-c<connections>`, e.g. `warm-1a2w-c2`.
 * - saturation run: more connections than workers, so jobs queue behind the concurrency-1 workers.
 * - fixed-rate (open-loop) run: `-r<n>` sends n requests per second in all, evenly spaced, whatever the answers
 *   take, on up to `c` connections, e.g. `cold-prewarm-1a1w-c4-r5`. Back-to-back load (closed
 *   loop) never leaves a prewarmed spare time to boot; a fixed rate shows what prewarm is for.
 * - flow scenarios: `loop100` and `router` run the warm mode against another seeded flow
 *   (BENCHMARK_LOOP_FLOW: a loop over 100 items, a code and a math step each;
 *   BENCHMARK_ROUTER_FLOW: a router of four branches before the benchmark flow's steps), e.g.
 *   `loop100-1a1w-c1`; compare each with `warm-1a1w-c1` in the same run.
 * - simulated fleet: `sim-<apps>a<workers>w-t<ms>` runs real apps, Redis, Postgres and S3 with
 *   simulated workers (benchmark/src/sim/) that speak the worker protocol but spend a fixed
 *   service time instead of running an engine, e.g. `sim-16a160w-t200`; connections = workers
 *   unless `-c<n>` follows.
 * - durable runs: `pause<n>-<apps>a<workers>w` sends n sync requests within one second (one per
 *   connection) to BENCHMARK_PAUSE_FLOW, whose runs pause 5 s between two code steps, and
 *   measures when each is answered, e.g. `pause500-1a1w`. `delay` and `nodelay` run warm workers
 *   against BENCHMARK_DELAY_FLOW (a 1.1 s delay between two code steps: one pause and one resume
 *   per run) and the same flow without the delay; compare them at the same fixed rate,
 *   `delay-1a1w-c64-r20` against `nodelay-1a1w-c64-r20`: the report gives the CPU a resume adds.
 * - network run: `-net` at the end of a name (`warm-1a1w-c1-net`) reaches Postgres, Redis and S3
 *   through proxies that add `--latency`'s delays (default s3=20,pg=1,redis=0.5 ms one way);
 *   the same scenario without `-net` in the same run is its loopback twin.
 */
export const MODES = [
  'warm',
  'cold-prewarm',
  'cold',
  'isolate',
  'target',
  'sim',
  'loop100',
  'router',
  'pause',
  'delay',
  'nodelay',
] as const;
export type Mode = (typeof MODES)[number];

export interface Scenario {
  name: string;
  mode: Mode;
  apps: number;
  workers: number;
  connections: number;
  /** Requests per second in all (open loop); undefined: each connection sends back to back. */
  rate?: number;
  /** `sim`: each simulated job's fixed service time in ms. */
  serviceMs?: number;
  /** Seconds of the no-load window after the warm-up (`-i<s>`); default 2. */
  idleS?: number;
  /** `-net`: the stores are reached through the latency proxies (network.ts). */
  network?: boolean;
}

const NAME =
  /^(warm|cold-prewarm|cold|isolate|target|loop100|router|delay|nodelay)-(\d+)a(\d+)w-c(\d+)(?:-r(\d+))?(-net)?$/;
const PAUSE_NAME = /^pause(\d+)-(\d+)a(\d+)w$/;
const SIM_NAME = /^sim-(\d+)a(\d+)w-t(\d+)(?:-c(\d+))?(?:-r(\d+))?(?:-i(\d+))?$/;
const MAX_IDLE_S = 600;
const MAX_RATE = 10_000;
const MAX_PROCESSES = 32;
/** Simulated workers are sockets in one process, not processes. */
const MAX_SIMULATED_WORKERS = 2_000;
const MAX_SERVICE_MS = 60_000;
const MAX_CONNECTIONS = 2_048;

export function scenarioName(s: Omit<Scenario, 'name'>): string {
  if (s.mode === 'pause') return `pause${s.connections}-${s.apps}a${s.workers}w`;
  const rate = s.rate === undefined ? '' : `-r${s.rate}`;
  if (s.mode === 'sim') {
    const connections = s.connections === s.workers ? '' : `-c${s.connections}`;
    const idle = s.idleS === undefined ? '' : `-i${s.idleS}`;
    return `sim-${s.apps}a${s.workers}w-t${s.serviceMs ?? 0}${connections}${rate}${idle}`;
  }
  return `${s.mode}-${s.apps}a${s.workers}w-c${s.connections}${rate}${s.network === true ? '-net' : ''}`;
}

/** A simulated-fleet scenario: `apps` real apps, `workers` simulated workers of `serviceMs` each. */
export function simScenario(
  apps: number,
  workers: number,
  serviceMs: number,
  connections = workers,
): Scenario {
  const shape = { mode: 'sim' as const, apps, workers, connections, serviceMs };
  return { name: scenarioName(shape), ...shape };
}

export function scenario(
  mode: Mode,
  apps: number,
  workers: number,
  connections = workers,
  rate?: number,
): Scenario {
  const shape = { mode, apps, workers, connections, ...(rate === undefined ? {} : { rate }) };
  return { name: scenarioName(shape), ...shape };
}

/**
 * `pause<n>-<apps>a<workers>w`: n requests, one per connection, sent evenly over one second
 * (a fixed rate of n per second for one second, whatever the answers take).
 */
export function pauseScenario(requests: number, apps: number, workers: number): Scenario {
  const shape = { mode: 'pause' as const, apps, workers, connections: requests, rate: requests };
  return { name: scenarioName(shape), ...shape };
}

/** Reads a scenario from its name; any shape is allowed, not only the suite's. */
export function parseScenarioName(name: string): Scenario {
  const sim = SIM_NAME.exec(name);
  if (sim !== null) return parseSimName(name, sim);
  const pause = PAUSE_NAME.exec(name);
  if (pause !== null) {
    const parsed = pauseScenario(Number(pause[1]), Number(pause[2]), Number(pause[3]));
    if (
      parsed.apps < 1 ||
      parsed.workers < 1 ||
      parsed.apps > MAX_PROCESSES ||
      parsed.workers > MAX_PROCESSES
    )
      throw new Error(`scenario "${name}": apps and workers must be between 1 and ${MAX_PROCESSES}`);
    if (parsed.connections < 1 || parsed.connections > MAX_CONNECTIONS)
      throw new Error(`scenario "${name}": requests must be between 1 and ${MAX_CONNECTIONS}`);
    return parsed;
  }
  const match = NAME.exec(name);
  if (match === null) {
    throw new Error(
      `unknown scenario "${name}": expected <mode>-<apps>a<workers>w-c<connections> with mode ${MODES.filter((m) => m !== 'sim' && m !== 'pause').join(' | ')}, e.g. warm-1a2w-c2, or sim-<apps>a<workers>w-t<ms>, e.g. sim-16a160w-t200, or pause<requests>-<apps>a<workers>w, e.g. pause500-1a1w`,
    );
  }
  const [, mode, apps, workers, connections, rate, net] = match;
  const shape = scenario(
    mode as Mode,
    Number(apps),
    Number(workers),
    Number(connections),
    rate === undefined ? undefined : Number(rate),
  );
  if (net !== undefined && mode === 'target') {
    throw new Error(`scenario "${name}": a deployment's network is its own; -net is for local stacks`);
  }
  const parsed = net === undefined ? shape : { ...shape, network: true, name: `${shape.name}-net` };
  if (
    parsed.apps < 1 ||
    parsed.workers < 1 ||
    parsed.apps > MAX_PROCESSES ||
    parsed.workers > MAX_PROCESSES
  ) {
    throw new Error(`scenario "${name}": apps and workers must be between 1 and ${MAX_PROCESSES}`);
  }
  if (parsed.connections < 1 || parsed.connections > MAX_CONNECTIONS) {
    throw new Error(`scenario "${name}": connections must be between 1 and ${MAX_CONNECTIONS}`);
  }
  if (parsed.rate !== undefined && (parsed.rate < 1 || parsed.rate > MAX_RATE)) {
    throw new Error(`scenario "${name}": the rate must be between 1 and ${MAX_RATE} requests per second`);
  }
  return parsed;
}

function parseSimName(name: string, match: RegExpExecArray): Scenario {
  const [, apps, workers, serviceMs, connections, rate, idle] = match;
  const parsed = simScenario(
    Number(apps),
    Number(workers),
    Number(serviceMs),
    connections === undefined ? Number(workers) : Number(connections),
  );
  const withRate = rate === undefined ? parsed : { ...parsed, rate: Number(rate) };
  const withIdle = idle === undefined ? withRate : { ...withRate, idleS: Number(idle) };
  const named = { ...withIdle, name: scenarioName(withIdle) };
  if (named.idleS !== undefined && (named.idleS < 1 || named.idleS > MAX_IDLE_S))
    throw new Error(`scenario "${name}": the idle window must be between 1 and ${MAX_IDLE_S} s`);
  if (named.apps < 1 || named.apps > MAX_PROCESSES)
    throw new Error(`scenario "${name}": apps must be between 1 and ${MAX_PROCESSES}`);
  if (named.workers < 1 || named.workers > MAX_SIMULATED_WORKERS)
    throw new Error(`scenario "${name}": simulated workers must be between 1 and ${MAX_SIMULATED_WORKERS}`);
  if ((named.serviceMs ?? 0) > MAX_SERVICE_MS)
    throw new Error(`scenario "${name}": the service time must be at most ${MAX_SERVICE_MS} ms`);
  if (named.connections < 1 || named.connections > MAX_CONNECTIONS)
    throw new Error(`scenario "${name}": connections must be between 1 and ${MAX_CONNECTIONS}`);
  if (named.rate !== undefined && (named.rate < 1 || named.rate > MAX_RATE))
    throw new Error(`scenario "${name}": the rate must be between 1 and ${MAX_RATE} requests per second`);
  return named;
}

/** Saturation runs use this many connections per worker. */
export const SATURATION_FACTOR = 4;

/**
 * The standard suite: warm and cold (with and without prewarm) at 1, 2 and 4 workers with
 * connections matched to the workers as the reference benchmark does; 2 apps against 1 (the
 * ratio question); saturation runs with 4 connections per worker; and warm against cold with
 * prewarm at a fixed 5 requests per second (open loop), where a prewarmed spare has time to boot.
 */
export function standardSuite(): Scenario[] {
  return [
    scenario('warm', 1, 1),
    scenario('warm', 1, 2),
    scenario('warm', 1, 4),
    scenario('warm', 2, 2),
    scenario('warm', 2, 4),
    scenario('warm', 1, 1, SATURATION_FACTOR),
    scenario('warm', 1, 4, 4 * SATURATION_FACTOR),
    scenario('cold-prewarm', 1, 1),
    scenario('cold-prewarm', 1, 2),
    scenario('cold-prewarm', 1, 4),
    scenario('cold-prewarm', 2, 4),
    scenario('cold-prewarm', 1, 4, 4 * SATURATION_FACTOR),
    scenario('cold', 1, 1),
    scenario('cold', 1, 2),
    scenario('cold', 1, 4),
    scenario('cold', 1, 4, 4 * SATURATION_FACTOR),
    scenario('warm', 1, 1, 4, FIXED_RATE),
    scenario('cold-prewarm', 1, 1, 4, FIXED_RATE),
    scenario('isolate', 1, 1),
    scenario('isolate', 1, 2),
    scenario('isolate', 1, 4),
    scenario('isolate', 1, 4, 4 * SATURATION_FACTOR),
    scenario('loop100', 1, 1),
    scenario('router', 1, 1),
    pauseScenario(PAUSE_REQUESTS, 1, 1),
    scenario('delay', 1, 1, RESUME_CONNECTIONS, RESUME_RATE),
    scenario('nodelay', 1, 1, RESUME_CONNECTIONS, RESUME_RATE),
  ];
}

/** `pause500-1a1w`: 500 sync requests within a second, each run pausing 5 s, on one worker. */
export const PAUSE_REQUESTS = 500;
/**
 * The resume-cost pair's fixed rate and connections: the same runs per second on both sides,
 * so the background (BullMQ's polls, periodic checks) falls alike on each run. At 20 per second a
 * 1.1 s delay keeps about 22 requests in flight, more when resumes run late on a busy machine;
 * a request due while every connection is busy is an error (paced-load.ts), hence 64.
 */
export const RESUME_RATE = 20;
export const RESUME_CONNECTIONS = 64;

/** The open-loop scenarios' rate: one that cold engines with prewarm can sustain on 2 cores. */
export const FIXED_RATE = 5;

/** The quick suite: one worker in each mode plus two warm workers, for a laptop in under 2 minutes. */
export function quickSuite(): Scenario[] {
  return [
    scenario('warm', 1, 1),
    scenario('warm', 1, 2),
    scenario('cold-prewarm', 1, 1),
    scenario('cold', 1, 1),
  ];
}

/** The reference's per-flow time (its worker-busy average at 160 workers was ~218 ms). */
export const FLEET_SERVICE_MS = 200;

/**
 * `--suite fleet`: the reference's fleet table with simulated workers (40 to 160 at 1:10), its
 * ratio pairs (1:20 against 1:10 at 40 and 80), one app under a growing fleet (where its event
 * loop passes 50 ms), and 1,000 idle workers for a minute (what an idle worker costs).
 */
export function fleetSuite(): Scenario[] {
  const t = FLEET_SERVICE_MS;
  const idle = simScenario(1, 1000, t, 10);
  return [
    simScenario(4, 40, t),
    simScenario(8, 80, t),
    simScenario(12, 120, t),
    simScenario(16, 160, t),
    simScenario(2, 40, t),
    simScenario(4, 80, t),
    simScenario(1, 40, t),
    simScenario(1, 80, t),
    simScenario(1, 160, t),
    simScenario(1, 320, t),
    { ...idle, idleS: 60, name: scenarioName({ ...idle, idleS: 60 }) },
  ];
}

/** Against a deployment: connections matched to its workers, then a saturation run. */
export function targetSuite(workers: number): Scenario[] {
  return [scenario('target', 1, workers), scenario('target', 1, workers, workers * SATURATION_FACTOR)];
}

/** Applies --connections to every scenario (renaming it, so the report says what ran). */
export function withConnections(list: readonly Scenario[], connections: number | undefined): Scenario[] {
  if (connections === undefined) return [...list];
  const byName = new Map<string, Scenario>();
  for (const s of list) {
    // A pause burst sends one request per connection within its second.
    const shape = s.mode === 'pause' ? { ...s, connections, rate: connections } : { ...s, connections };
    const renamed = { ...shape, name: scenarioName(shape) };
    if (!byName.has(renamed.name)) byName.set(renamed.name, renamed);
  }
  return [...byName.values()];
}

/**
 * `--latency` without any `-net` scenario: every scenario runs on that network. With one, only
 * the `-net` scenarios do, so each can be compared with its loopback twin in the same run.
 */
export function onNetwork(list: readonly Scenario[], latencyGiven: boolean): Scenario[] {
  if (!latencyGiven || list.some((s) => s.network === true)) return [...list];
  return list.map((s) => {
    if (s.mode === 'sim' || s.mode === 'target') return s;
    const shape = { ...s, network: true };
    return { ...shape, name: scenarioName(shape) };
  });
}

/** The worker environment that puts a worker in the scenario's mode. */
export function workerEnvFor(mode: Mode): Record<string, string> {
  switch (mode) {
    case 'warm':
    case 'loop100':
    case 'router':
    case 'pause':
    case 'delay':
    case 'nodelay':
      return { REUSE_SANDBOX: 'true' };
    case 'cold-prewarm':
      return { REUSE_SANDBOX: 'false', PREWARM: 'true' };
    case 'cold':
      return { REUSE_SANDBOX: 'false', PREWARM: 'false' };
    case 'isolate':
      return { RUN_ISOLATION: 'isolate' };
    case 'target':
    case 'sim':
      return {};
  }
}

/** The seeded flow a scenario's load calls: the benchmark flow but for the flow scenarios. */
export function flowIdFor(mode: Mode): string {
  switch (mode) {
    case 'loop100':
      return BENCHMARK_LOOP_FLOW_ID;
    case 'router':
      return BENCHMARK_ROUTER_FLOW_ID;
    case 'pause':
      return BENCHMARK_PAUSE_FLOW_ID;
    case 'delay':
      return BENCHMARK_DELAY_FLOW_ID;
    case 'nodelay':
      return BENCHMARK_NODELAY_FLOW_ID;
    default:
      return BENCHMARK_FLOW_ID;
  }
}
