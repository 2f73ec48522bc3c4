/**
 * Code-step cost per isolate scheme, on the seeded flow's code step, N runs each (default 2,000):
 *   fresh-isolate   a new isolate per run, disposed after it (the simplest leak-free scheme)
 *   reused-isolate  the engine's SANDBOX_CODE_ONLY runner: one isolate, a context per run, released
 *   node-vm         the engine's UNSANDBOXED runner
 * Prints JSON: per-run min / median / p95 (ms), and for the reused isolate its heap and the
 * process RSS before and after, to show the scheme does not grow. `cpuPerRunMs`: the process's
 * CPU (every thread, isolated-vm's included) per reused-isolate run, and per context alone (made
 * and released in one isolate, nothing run in it): what a fresh context costs of a run.
 *
 *   node apps/engine/scripts/measure-code-runners.ts [--runs 2000]
 */
import { parseArgs } from 'node:util';
import { wrapCodeStep } from '@flowbox/protocol';
import ivm from 'isolated-vm';
import { CODE_STEP_LINE_OFFSET, CODE_STEP_URL, type CodeRunRequest } from '../src/code-steps/code-runner.ts';
import { openCodeStepSession } from '../src/code-steps/code-step-host.ts';
import { isolateClosureBody } from '../src/code-steps/code-step-script.ts';
import { createIsolatedVmRunner } from '../src/code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from '../src/code-steps/node-vm-runner.ts';

const REQUEST: CodeRunRequest = {
  source: wrapCodeStep('return { result: Number(inputs.sum) + 1 };'),
  inputs: { sum: 5 },
  timeoutMs: 5_000,
  memoryMb: 32,
  host: openCodeStepSession(() => Promise.reject(new Error('no network here'))).host,
};

async function freshIsolateRun(request: CodeRunRequest): Promise<unknown> {
  const isolate = new ivm.Isolate({ memoryLimit: request.memoryMb });
  try {
    const context = await isolate.createContext();
    const json = await context.evalClosure(
      isolateClosureBody(request.source),
      [
        JSON.stringify(request.inputs),
        new ivm.Reference(request.host.log),
        new ivm.Reference(request.host.sleep),
        new ivm.Reference(request.host.fetch),
      ],
      {
        timeout: request.timeoutMs,
        filename: CODE_STEP_URL,
        lineOffset: CODE_STEP_LINE_OFFSET,
        result: { promise: true, copy: true },
      },
    );
    return JSON.parse(String(json));
  } finally {
    isolate.dispose();
  }
}

/** Process CPU per call, every thread counted (isolated-vm runs an isolate on a thread of its own). */
async function cpuPerRun(runs: number, run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < runs; i += 1) await run();
  const { user, system } = process.cpuUsage(before);
  return round((user + system) / 1000 / runs);
}

async function time(runs: number, run: () => Promise<unknown>, every?: (i: number) => Promise<void>) {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
    if (every !== undefined && i % 100 === 99) await every(i);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) =>
    round(samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] ?? 0);
  return { min: round(samples[0] ?? 0), median: at(0.5), p95: at(0.95) };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '2000' } } });
  const runs = Number(values.runs);
  const reused = createIsolatedVmRunner({
    onCatastrophicError: (message) => process.stderr.write(`${message}\n`),
  });
  const nodeVm = createNodeVmRunner();
  const contextIsolate = new ivm.Isolate({ memoryLimit: REQUEST.memoryMb });
  await reused.run(REQUEST);
  // The reused isolate goes first, so the process RSS around it is its own.
  const heapUsedMb: number[] = [];
  const rss: number[] = [];
  const sample = async () => {
    heapUsedMb.push(mb((await reused.stats()).heap?.usedBytes ?? 0));
    rss.push(mb(process.memoryUsage().rss));
  };
  await sample();
  const reusedIsolateMs = await time(runs, () => reused.run(REQUEST), sample);
  const report = {
    runs,
    freshIsolateMs: await time(runs, () => freshIsolateRun(REQUEST)),
    reusedIsolateMs,
    nodeVmMs: await time(runs, () => nodeVm.run(REQUEST)),
    cpuPerRunMs: {
      reusedIsolate: await cpuPerRun(runs, () => reused.run(REQUEST)),
      contextAlone: await cpuPerRun(runs, async () => (await contextIsolate.createContext()).release()),
    },
    reusedIsolate: {
      isolatesCreated: (await reused.stats()).isolatesCreated,
      // Sampled every 100 runs: a leak climbs to the memory limit, garbage saws up and down.
      heapUsedMb: { first: heapUsedMb[0], max: Math.max(...heapUsedMb), last: heapUsedMb.at(-1) },
      processRssMb: { first: rss[0], max: Math.max(...rss), last: rss.at(-1) },
    },
    node: process.version,
  };
  reused.close();
  contextIsolate.dispose();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
