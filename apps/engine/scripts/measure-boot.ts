/**
 * Engine boot time, measured the way the worker boots engines: the built bundle is installed
 * into a cache folder (`<cache>/engine/<sha256>/engine.mjs` beside `node_modules/isolated-vm`)
 * and forked with the recipe of README.md, N times (not counting one first fork that fills the
 * compile cache). Prints JSON with min / median / p95 of:
 *   readyMs     fork → `ready`, sent once the runtime and isolated-vm are loaded (the worker's bootMs)
 *   runtimeMs   fork → the answer to a frame sent at `ready`, parsed with the protocol schemas
 *   baselineMs  fork → `ready` of a file that only sends `ready`: the floor Node itself sets
 *   jobMs       with --job: fork → the result of the seeded flow sent at `ready` (fake app,
 *               SANDBOX_CODE_ONLY): what a cold, not prewarmed engine adds to a request
 *   firstRunMs  with --job: `execute` → result on a fresh engine: its first run
 *   preloadedRunMs  with --job: the same on a fresh engine that preloaded the flow's pieces
 *               first, as a prewarmed spare does (alternating with firstRunMs)
 * The engine and the baseline forks alternate, so machine load hits both alike.
 *
 *   node apps/engine/scripts/measure-boot.ts [--runs 20] [--entry dist/engine.mjs] [--no-compile-cache]
 *     [--in-place]   fork the entry where it is (a source main.ts), without installing it
 *     [--job]        also run the seeded flow once per engine
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeEngineJob, prepareEngineArtifacts, startFakeAppServer } from '../src/testing/index.ts';

interface Sample {
  readyMs: number;
  runtimeMs: number;
}

/** Sends one job at `ready` and resolves with fork → its result. */
type JobProbe = (child: ChildProcess, started: number) => Promise<number>;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '20' },
      entry: { type: 'string', default: resolve(import.meta.dirname, '../dist/engine.mjs') },
      'no-compile-cache': { type: 'boolean', default: false },
      'in-place': { type: 'boolean', default: false },
      job: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  const root = await mkdtemp(join(tmpdir(), 'flowbox-measure-boot-'));
  try {
    const entry = values['in-place'] ? resolve(values.entry) : await install(resolve(values.entry), root);
    const baseline = join(root, 'baseline.mjs');
    await writeFile(baseline, "process.send({ version: 1, type: 'ready', pid: process.pid });\n");
    const env: Record<string, string> = values['no-compile-cache']
      ? {}
      : { NODE_COMPILE_CACHE: join(root, 'compile-cache') };

    const first = await bootOnce(entry, env);
    const engine: Sample[] = [];
    const floor: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      engine.push(await bootOnce(entry, env));
      floor.push((await bootOnce(baseline, env, false)).readyMs);
    }
    const jobs: number[] = [];
    const firstRuns: number[] = [];
    const preloadedRuns: number[] = [];
    if (values.job) {
      const app = await startFakeAppServer();
      try {
        const artifacts = await prepareEngineArtifacts(join(root, 'artifacts'));
        const job = makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), artifacts);
        const probe: JobProbe = async (child, started) => {
          child.send({ version: 1, type: 'execute', requestId: 'measure', job });
          await new Promise<void>((resolveResult) => {
            child.on('message', (frame: { type?: string }) => {
              if (frame.type === 'execute-result') resolveResult();
            });
          });
          return performance.now() - started;
        };
        for (let i = 0; i < runs; i += 1) jobs.push(await forkWithJob(entry, env, probe));
        const runOnce = async (child: ChildProcess) => {
          const sent = performance.now();
          await probe(child, sent);
          return performance.now() - sent;
        };
        for (let i = 0; i < runs; i += 1) {
          firstRuns.push(await forkWithJob(entry, env, (child) => runOnce(child)));
          preloadedRuns.push(
            await forkWithJob(entry, env, async (child) => {
              child.send({ version: 1, type: 'preload', pieces: job.pieces });
              await new Promise<void>((resolvePreload) => {
                child.on('message', (frame: { msg?: string }) => {
                  if (frame.msg === 'preloaded pieces') resolvePreload();
                });
              });
              return runOnce(child);
            }),
          );
        }
      } finally {
        await app.close();
      }
    }
    const report = {
      runs,
      entry: values.entry,
      compileCache: !values['no-compile-cache'],
      firstBoot: first,
      readyMs: summary(engine.map((s) => s.readyMs)),
      runtimeMs: summary(engine.map((s) => s.runtimeMs)),
      baselineMs: summary(floor),
      ...(values.job
        ? { jobMs: summary(jobs), firstRunMs: summary(firstRuns), preloadedRunMs: summary(preloadedRuns) }
        : {}),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Copies the bundle to `<root>/engine/<sha256>/engine.mjs` with isolated-vm linked beside it. */
async function install(bundle: string, root: string): Promise<string> {
  const code = await readFile(bundle);
  const dir = join(root, 'engine', createHash('sha256').update(code).digest('hex'));
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  const isolatedVm = dirname(createRequire(bundle).resolve('isolated-vm/package.json'));
  await symlink(isolatedVm, join(dir, 'node_modules/isolated-vm'), 'dir');
  await copyFile(bundle, join(dir, 'engine.mjs'));
  return join(dir, 'engine.mjs');
}

/** One fork; for the engine, also sends a bad frame and waits for the log line that drops it. */
async function bootOnce(entry: string, env: Record<string, string>, probe = true): Promise<Sample> {
  const started = performance.now();
  const child = fork(entry, [], {
    execArgv: [],
    env,
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  const frames: { type?: string; msg?: string }[] = [];
  const waitFor = (match: (frame: { type?: string; msg?: string }) => boolean) =>
    new Promise<number>((resolveWait, reject) => {
      const check = (frame: { type?: string; msg?: string }) => {
        if (!match(frame)) return;
        child.off('message', check);
        resolveWait(performance.now() - started);
      };
      child.on('message', check);
      child.once('exit', (code) =>
        reject(new Error(`engine exited with ${code} before it answered (${JSON.stringify(frames)})`)),
      );
    });
  const ready = waitFor((frame) => frame.type === 'ready');
  const parsed = waitFor((frame) => frame.msg === 'dropped a bad IPC frame');
  child.on('message', (frame: { type?: string; msg?: string }) => frames.push(frame));
  const readyMs = await ready;
  let runtimeMs = readyMs;
  if (probe) {
    child.send({ version: 1, type: 'probe' });
    runtimeMs = await parsed;
  } else {
    parsed.catch(() => {});
  }
  child.disconnect();
  await exited;
  return { readyMs: round(readyMs), runtimeMs: round(runtimeMs) };
}

async function forkWithJob(entry: string, env: Record<string, string>, probe: JobProbe): Promise<number> {
  const started = performance.now();
  const child = fork(entry, [], {
    execArgv: [],
    env,
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  await new Promise<void>((resolveReady) => {
    child.on('message', (frame: { type?: string }) => {
      if (frame.type === 'ready') resolveReady();
    });
  });
  const ms = await probe(child, started);
  child.disconnect();
  await exited;
  return round(ms);
}

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { min: round(sorted[0] ?? Number.NaN), median: round(at(0.5)), p95: round(at(0.95)) };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
