import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { EngineJob, FlowDefinition } from '@flowbox/protocol';
import { createIsolatedVmRunner } from '../../src/code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from '../../src/code-steps/node-vm-runner.ts';
import { createFlowBundleLoader } from '../../src/flows/flow-bundle-loader.ts';
import { createFlowExecutor } from '../../src/flows/flow-executor.ts';
import { createHttpClient } from '../../src/host/http-client.ts';
import { createRunIsolation, DEFAULT_ISOLATE_MAX_RUNS } from '../../src/isolate/run-isolation.ts';
import { createPieceLoader } from '../../src/pieces/piece-loader.ts';
import { prepareEngineArtifacts } from './artifacts.ts';
import { executeThenPersist } from './execute-then-persist.ts';
import { makeEngineJob, SEEDED_FLOW } from './fixtures.ts';

/** What many runs of the seeded flow in one in-process engine cost and left behind. */
export interface RunSoakReport {
  isolation: 'shared' | 'isolate';
  runs: number;
  /** `isolate`: the runs one isolate served (ISOLATE_MAX_RUNS), and the isolates made. */
  maxRunsPerIsolate?: number;
  isolates?: number;
  failed: number;
  /** Process CPU per run (the engine with its callbacks' sink server, which is the same for both). */
  cpuMsPerRun: number;
  /** Wall time of one execute (the run and its log upload), the median. */
  medianRunMs: number;
  /** After a forced GC, once warmed up (a tenth of the runs in) and at the end. */
  heapUsedMb: { warm: number; end: number };
  rssMb: { warm: number; end: number };
  /** Memory after a forced GC once `run` runs were done, for each of `samplesAt` (in order). */
  samples: MemorySample[];
}

/** The engine's memory after a forced GC, in MB, once `run` runs were done. */
export interface MemorySample {
  run: number;
  heapUsedMb: number;
  /** The V8 heap's committed size (used, free and fragmented), part of RSS. */
  heapTotalMb: number;
  /** Each V8 heap space's committed size (new_space: the young generation, which V8 grows). */
  spacesMb: Record<string, number>;
  rssMb: number;
  /** Memory outside the V8 heap that Node knows of (buffers; not isolates' heaps, which are in RSS). */
  externalMb: number;
}

/**
 * The seeded flow `runs` times in one engine (its executor, in this process), each run in its
 * own isolate or in the engine's realm, against a sink that answers every callback and upload
 * with 204 and keeps nothing. For the isolate soak test and measure-isolate-runs.ts.
 */
export async function soakRuns(options: {
  runs: number;
  isolation: 'shared' | 'isolate';
  /** ISOLATE_MAX_RUNS for the engine's isolates; the engine's default if absent. */
  maxRunsPerIsolate?: number;
  /** Run counts after which memory is sampled (forced GC first); none by default. */
  samplesAt?: readonly number[];
  /** The flow each run runs; the seeded flow by default. */
  flow?: FlowDefinition;
}): Promise<RunSoakReport> {
  const gc = exposeGc();
  const dir = await mkdtemp(join(tmpdir(), 'flowbox-engine-soak-'));
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.statusCode = 204;
      res.end();
    });
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const http = createHttpClient();
  const isolated = createIsolatedVmRunner({ onCatastrophicError: () => {} });
  const runIsolation = createRunIsolation({
    library: isolated.library,
    log: () => {},
    onCatastrophicError: () => {},
    ...(options.maxRunsPerIsolate === undefined ? {} : { maxRunsPerIsolate: options.maxRunsPerIsolate }),
  });
  try {
    const executor = createFlowExecutor({
      bundles: createFlowBundleLoader(),
      pieces: createPieceLoader(),
      codeRunners: { SANDBOX_CODE_ONLY: isolated, SANDBOXED: isolated, UNSANDBOXED: createNodeVmRunner() },
      http,
      log: () => {},
      runIsolation,
    });
    const artifacts = await prepareEngineArtifacts(dir, options.flow ?? SEEDED_FLOW);
    const job: EngineJob = makeEngineJob(url, `${url}/s3/logs/run.json`, {
      ...artifacts,
      ...(options.isolation === 'isolate' ? { isolation: 'isolate' as const } : {}),
    });
    const warmRuns = Math.max(1, Math.floor(options.runs / 10));
    let failed = 0;
    const walls: number[] = [];
    // A sample's forced GC is not the runs' CPU: it is taken out of the measured window.
    let sampleCpuUs = 0;
    const sampleAt = new Set(options.samplesAt ?? []);
    const samples: MemorySample[] = [];
    const runOnce = async () => {
      const started = performance.now();
      const { outcome } = await executeThenPersist(executor, job);
      walls.push(performance.now() - started);
      if (outcome.status !== 'SUCCEEDED') failed += 1;
      // As the engine does once the result is sent (engine-runtime.ts).
      runIsolation.prepareNext();
      if (sampleAt.has(walls.length)) {
        const before = process.cpuUsage();
        samples.push({ run: walls.length, ...memory(gc) });
        const spent = process.cpuUsage(before);
        sampleCpuUs += spent.user + spent.system;
      }
    };
    for (let i = 0; i < warmRuns; i += 1) await runOnce();
    const warm = memory(gc);
    sampleCpuUs = 0;
    const cpu = process.cpuUsage();
    const measured = options.runs - warmRuns;
    for (let i = 0; i < measured; i += 1) await runOnce();
    const used = process.cpuUsage(cpu);
    const end = memory(gc);
    const measuredWalls = walls.slice(warmRuns).sort((a, b) => a - b);
    return {
      isolation: options.isolation,
      runs: options.runs,
      ...(options.isolation === 'isolate'
        ? {
            maxRunsPerIsolate: options.maxRunsPerIsolate ?? DEFAULT_ISOLATE_MAX_RUNS,
            isolates: runIsolation.counts().isolates,
          }
        : {}),
      failed,
      cpuMsPerRun: round((used.user + used.system - sampleCpuUs) / 1000 / Math.max(1, measured)),
      medianRunMs: round(measuredWalls[Math.floor(measuredWalls.length / 2)] ?? 0),
      heapUsedMb: { warm: warm.heapUsedMb, end: end.heapUsedMb },
      rssMb: { warm: warm.rssMb, end: end.rssMb },
      samples,
    };
  } finally {
    runIsolation.close();
    isolated.close();
    http.close();
    sink.closeAllConnections();
    sink.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function memory(gc: () => void): Omit<MemorySample, 'run'> {
  gc();
  const usage = process.memoryUsage();
  return {
    heapUsedMb: round(usage.heapUsed / 2 ** 20),
    heapTotalMb: round(usage.heapTotal / 2 ** 20),
    spacesMb: Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [space.space_name, round(space.space_size / 2 ** 20)]),
    ),
    rssMb: round(usage.rss / 2 ** 20),
    externalMb: round(usage.external / 2 ** 20),
  };
}

const round = (value: number) => Math.round(value * 100) / 100;
