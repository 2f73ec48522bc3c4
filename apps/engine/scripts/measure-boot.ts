/**
 * One fresh engine's life, phase by phase, against the floor: a bare `node` fork that only
 * answers `ready` over IPC and exits when the channel closes. Engines are installed the way the
 * worker installs them (`<cache>/engine/<sha256>/engine.mjs` beside `node_modules/isolated-vm`)
 * and started the way the worker starts them; engine and floor forks alternate, so machine
 * load hits both alike. Per phase it reports wall ms and CPU ms (user+sys of the child from
 * /proc/<pid>/schedstat; the whole life, exit and reaping included, from this process's
 * reaped-children times in /proc/self/stat, a mean), each as a median and as a ratio to the floor's
 * fork → ready of the same run:
 *   ready      fork → `ready` (Node bootstrap, the engine runtime, isolated-vm): the worker's bootMs
 *   pieces     `preload` → `preloaded pieces` (what a prewarmed spare does before its job)
 *   firstRun   `execute` → result of the seeded flow (SANDBOX_CODE_ONLY): callbacks (over IPC,
 *              answered here as a worker would), the code step's first isolate, the log upload
 *              (to a fake app), all with a cold JIT
 *   warmRun    the same flow again in the same engine, twice more: the warm run phase
 *   exit       `disconnect` → the parent's `exit` event (the process ends and is reaped)
 *   life       CPU of the whole process, fork to reaped (floor: fork, ready, exit)
 * A second floor, the isolate floor, is the least a cold job with a code step can cost: a fork
 * that loads isolated-vm the way the engine does, answers `ready`, evaluates one expression in a
 * fresh isolate and context (its `firstRun`) and exits. `coldJobCpuMs` is an engine's life less
 * its two warm runs: what one cold job's engine costs.
 *
 *   node apps/engine/scripts/measure-boot.ts [--runs 20] [--entry dist/engine.mjs] [--no-compile-cache]
 *     [--in-place]   fork the entry where it is (a source main.ts), without installing it
 *     [--snapshot]   start engines from a V8 startup snapshot of dist/engine-snapshot.cjs, built
 *                    into the install folder first, as the worker does (`node --snapshot-blob <blob>`)
 *     [--prime]      preload as a prewarmed spare does: also the code-step isolate and the app connection
 *     [--no-addon-link]  install without the `isolated-vm.node` link the worker makes: a snapshotted
 *                    engine then loads isolated-vm through its package (node-gyp-build)
 *     [--compare <engine.mjs>]  a second build (say, a baseline's dist), installed and started the
 *                    same way, its lives alternating with this one's and the floors'
 *     [--isolation isolate]  the jobs run each in a fresh context of the engine's run isolate
 *                    (RUN_ISOLATION=isolate, the worker's default); without it, in the engine's realm
 *     [--node-flag <flag>]  a Node or V8 flag for the engines and the isolate floor (repeatable)
 *     [--cpu-prof <dir>]  also profile one more engine's life (boot, preload, first run) into <dir>,
 *                    with phases.json: each phase's start and end in the profile's clock (µs)
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ISOLATED_VM_ADDON_FILE, isolatedVmAddonPath } from '../src/isolated-vm-addon.ts';
import { makeEngineJob, prepareEngineArtifacts, startFakeAppServer } from '../test/support/index.ts';
import {
  engineLife,
  FLOOR_SOURCE,
  floorLife,
  forkJson,
  isolateFloorLife,
  isolateFloorSource,
  type Launch,
  type Life,
  type PhaseMark,
  spawnJson,
} from './boot-lives.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '20' },
      entry: { type: 'string', default: resolve(import.meta.dirname, '../dist/engine.mjs') },
      'no-compile-cache': { type: 'boolean', default: false },
      'in-place': { type: 'boolean', default: false },
      snapshot: { type: 'boolean', default: false },
      prime: { type: 'boolean', default: false },
      'no-addon-link': { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      'node-flag': { type: 'string', multiple: true, default: [] },
      compare: { type: 'string' },
      isolation: { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  const root = await mkdtemp(join(tmpdir(), 'flowbox-measure-boot-'));
  const app = await startFakeAppServer();
  try {
    const env: Record<string, string> = values['no-compile-cache']
      ? {}
      : { NODE_COMPILE_CACHE: join(root, 'compile-cache') };
    const flags = values['node-flag'];
    const prepare = (bundle: string, label: string) =>
      prepareEngine(resolve(bundle), join(root, label), {
        env,
        flags,
        inPlace: values['in-place'],
        addonLink: !values['no-addon-link'],
        snapshot: values.snapshot,
      });
    const { entry, launch: engine, snapshotBuildMs } = await prepare(values.entry, 'tree');
    const compare = values.compare === undefined ? undefined : await prepare(values.compare, 'compare');
    const baseline = join(root, 'baseline.mjs');
    await writeFile(baseline, FLOOR_SOURCE);
    const floor: Launch = { start: () => forkJson(baseline, env, []) };
    // The least a cold job can cost: Node, isolated-vm, one expression in a fresh isolate, exit.
    const isolateFloorScript = join(dirname(entry), 'isolate-floor.mjs');
    await writeFile(isolateFloorScript, isolateFloorSource(!values['no-addon-link']));
    const isolateFloor: Launch = { start: () => forkJson(isolateFloorScript, env, flags) };
    const artifacts = await prepareEngineArtifacts(join(root, 'artifacts'));
    const job = makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), {
      ...artifacts,
      ...(values.isolation === 'isolate' ? { isolation: 'isolate' as const } : {}),
    });
    const preload = {
      version: 1,
      type: 'preload',
      pieces: job.pieces,
      ...(values.prime ? { codeStepMemoryMb: job.limits.codeStepMemoryMb, appUrl: job.appUrl } : {}),
      // As the worker preloads an engine for an isolate job: its snapshot and first context.
      ...(values.isolation === 'isolate'
        ? { isolation: 'isolate', codeStepMemoryMb: job.limits.codeStepMemoryMb }
        : {}),
    };

    // The first life fills the compile cache, as a worker's first engine does.
    const firstLife = await engineLife(engine, job, preload);
    if (compare !== undefined) await engineLife(compare.launch, job, preload);
    const engineLives: Life[] = [];
    const compareLives: Life[] = [];
    const floorLives: Life[] = [];
    const isolateFloorLives: Life[] = [];
    for (let i = 0; i < runs; i += 1) {
      engineLives.push(await engineLife(engine, job, preload));
      if (compare !== undefined) compareLives.push(await engineLife(compare.launch, job, preload));
      floorLives.push(await floorLife(floor));
      isolateFloorLives.push(await isolateFloorLife(isolateFloor));
    }
    if (values['cpu-prof'] !== undefined) {
      const dir = resolve(values['cpu-prof']);
      const marks: PhaseMark[] = [];
      await engineLife(
        { start: () => engine.start(['--cpu-prof', '--cpu-prof-interval=50', `--cpu-prof-dir=${dir}`]) },
        job,
        preload,
        marks,
      );
      // The profile's timestamps are the same monotonic clock in µs: split its samples by phase.
      await writeFile(join(dir, 'phases.json'), `${JSON.stringify(marks)}\n`);
    }
    const floorReadyCpu = median(floorLives.map((life) => life.ready?.cpuMs ?? Number.NaN));
    const floorReadyWall = median(floorLives.map((life) => life.ready?.wallMs ?? Number.NaN));
    const table = (lives: Life[]) =>
      Object.fromEntries(
        (['ready', 'pieces', 'firstRun', 'warmRun', 'exit', 'life'] as const)
          .filter((phase) => lives.some((life) => life[phase] !== undefined))
          .map((phase) => {
            const wall = median(lives.map((life) => life[phase]?.wallMs ?? Number.NaN));
            // A whole life's CPU is counted in 10 ms ticks: its mean over the runs is exact, a median is not.
            const cpus = lives.map((life) => life[phase]?.cpuMs ?? Number.NaN);
            const cpu = phase === 'life' ? mean(cpus) : median(cpus);
            return [
              phase,
              {
                wallMs: round(wall),
                cpuMs: round(cpu),
                wallX: round(wall / floorReadyWall, 100),
                cpuX: round(cpu / floorReadyCpu, 100),
              },
            ];
          }),
      );
    const report = {
      runs,
      entry: values.entry,
      compileCache: !values['no-compile-cache'],
      snapshot: values.snapshot,
      prime: values.prime,
      isolation: values.isolation === 'isolate' ? 'isolate' : 'shared',
      snapshotBuildMs,
      firstLife,
      note: 'medians; wallX/cpuX are ratios to the floor’s fork → ready (wall, CPU) of the same run',
      floor: table(floorLives),
      isolateFloor: table(isolateFloorLives),
      engine: table(engineLives),
      coldJobCpuMs: coldJobCpuMs(engineLives),
      ...(compare === undefined
        ? {}
        : {
            compare: values.compare,
            compareEngine: table(compareLives),
            compareColdJobCpuMs: coldJobCpuMs(compareLives),
          }),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await app.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** A cold job's engine: its life less the two warm runs it does here after its first. */
function coldJobCpuMs(lives: Life[]): number {
  const life = mean(lives.map((one) => one.life?.cpuMs ?? Number.NaN));
  return round(life - 2 * median(lives.map((one) => one.warmRun?.cpuMs ?? Number.NaN)));
}

/** Installs an engine bundle under `root` (and builds its snapshot) and says how to start it. */
async function prepareEngine(
  bundle: string,
  root: string,
  options: {
    env: Record<string, string>;
    flags: string[];
    inPlace: boolean;
    addonLink: boolean;
    snapshot: boolean;
  },
): Promise<{ entry: string; launch: Launch; snapshotBuildMs?: number }> {
  const { env, flags } = options;
  const entry = options.inPlace ? bundle : await install(bundle, root, options.addonLink);
  if (!options.snapshot) {
    return { entry, launch: { start: (execArgv = []) => forkJson(entry, env, [...flags, ...execArgv]) } };
  }
  const script = join(dirname(entry), 'engine-snapshot.cjs');
  const blob = join(dirname(entry), 'engine.blob');
  await copyFile(join(dirname(bundle), 'engine-snapshot.cjs'), script);
  const at = performance.now();
  await buildSnapshot(script, blob);
  return {
    entry,
    launch: { start: (execArgv = []) => spawnJson([...flags, '--snapshot-blob', blob, ...execArgv], env) },
    snapshotBuildMs: round(performance.now() - at),
  };
}

/** Copies the bundle to `<root>/engine/<sha256>/engine.mjs` with isolated-vm linked beside it. */
async function install(bundle: string, root: string, addonLink: boolean): Promise<string> {
  const code = await readFile(bundle);
  const dir = join(root, 'engine', createHash('sha256').update(code).digest('hex'));
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  const isolatedVm = dirname(createRequire(bundle).resolve('isolated-vm/package.json'));
  await symlink(isolatedVm, join(dir, 'node_modules/isolated-vm'), 'dir');
  const addon = addonLink ? isolatedVmAddonPath(isolatedVm) : undefined;
  // As the worker links it (engine-install.ts): a snapshotted engine then requires it directly.
  if (addon !== undefined) await symlink(addon, join(dir, ISOLATED_VM_ADDON_FILE), 'file');
  await copyFile(bundle, join(dir, 'engine.mjs'));
  return join(dir, 'engine.mjs');
}

async function buildSnapshot(script: string, blob: string): Promise<void> {
  const child = spawn(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', script], {
    cwd: dirname(script),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`--build-snapshot exited with ${code}: ${stderr.slice(-2000)}`);
}

function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function round(value: number, scale = 10): number {
  return Math.round(value * scale) / scale;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
