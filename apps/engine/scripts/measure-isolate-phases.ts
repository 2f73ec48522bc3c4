/**
 * CPU (the whole process) and wall time of each phase of a run in its own context, outside the
 * executor: the blank context (made between jobs, with a fresh isolate from the snapshot every
 * `--max-runs` runs; 1: a fresh isolate for every run), handing it to the run, each of the seeded
 * flow's calls, its release. Medians over the runs (the first tenth left out), and the means of
 * the phases made between jobs (a fresh isolate is one run in `--max-runs` of them). `--profile`
 * adds the isolates' own CPU profile, self time per function. The floor comes last: an isolate
 * with nothing in it, made, called once and disposed the same way. Needs `pnpm build`.
 *
 *   node apps/engine/scripts/measure-isolate-phases.ts [--runs 300] [--max-runs 100] [--profile]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createInputValidators } from '@flowbox/pieces-framework/validate';
import { wrapCodeStep } from '@flowbox/protocol';
import { createIsolatedVmRunner } from '../src/code-steps/isolated-vm-runner.ts';
import { loadIsolateFramework } from '../src/isolate/isolate-framework.ts';
import { createIsolateHost } from '../src/isolate/isolate-host.ts';
import { createBlankContext, createSnapshotIsolate, openRunIsolate } from '../src/isolate/isolate-run.ts';
import { createIsolateSnapshots } from '../src/isolate/isolate-snapshots.ts';
import { DEFAULT_ISOLATE_MAX_RUNS } from '../src/isolate/run-isolation.ts';
import { resolveTemplates } from '../src/steps/template.ts';
import { unpackBuiltPieces } from '../test/support/artifacts.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    'max-runs': { type: 'string', default: String(DEFAULT_ISOLATE_MAX_RUNS) },
    profile: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const maxRuns = Number(values['max-runs']);
const dir = await mkdtemp(join(tmpdir(), 'flowbox-phases-'));
const isolated = createIsolatedVmRunner({ onCatastrophicError: () => {} });
try {
  const ivm = await isolated.library();
  const snapshot = await createIsolateSnapshots({
    library: isolated.library,
    framework: loadIsolateFramework,
    log: () => {},
  }).forPieces(await unpackBuiltPieces(dir));
  const source = wrapCodeStep('return { result: Number(inputs.sum) + 1 };');
  const trigger = {
    name: 'trigger',
    piece: 'webhook',
    trigger: 'catch_webhook',
    input: {},
    payload: { method: 'POST', body: { hello: 'world' }, rawBody: null, headers: {}, query: {} },
  };
  const math = { name: 'step_1', piece: 'math-helper', action: 'addition_math', input: { a: 2, b: 3 } };
  const respond = {
    name: 'step_3',
    piece: 'webhook',
    action: 'return_response',
    input: { status: 200, headers: {}, body: '{{step_2}}' },
  };
  const noSession = { log: () => {}, sleep: async () => {}, fetch: async () => '{}' };
  const inputs = createInputValidators();
  /** A piece step as isolate-leaf-executor.ts runs it: resolved and validated here, run inside. */
  const runAction = async (
    run: ReturnType<typeof openRunIsolate>,
    step: { name: string; piece: string; action: string; input: unknown },
    scope: Record<string, unknown>,
  ) => {
    const resolved = { input: resolveTemplates(step.input, scope) };
    const piece = snapshot.pieces.get(step.piece);
    const inputSchema = piece?.inputs[step.action];
    if (piece === undefined || inputSchema === undefined) throw new Error(`no ${step.piece}/${step.action}`);
    const input = inputs.validate(piece.key, { name: step.action, inputSchema }, resolved.input, step.name);
    const answer = JSON.parse(await run.call('runAction', JSON.stringify({ ...step, input, token: 1 }))) as {
      output?: unknown;
    };
    scope[step.name] = answer.output;
  };
  const samples = new Map<string, { cpu: number[]; wall: number[] }>();
  const selfTime = new Map<string, number>();
  let cpu = process.cpuUsage();
  let wall = performance.now();
  const restart = () => {
    cpu = process.cpuUsage();
    wall = performance.now();
  };
  const mark = (name: string) => {
    const used = process.cpuUsage(cpu);
    const entry = samples.get(name) ?? { cpu: [], wall: [] };
    entry.cpu.push((used.user + used.system) / 1000);
    entry.wall.push(performance.now() - wall);
    samples.set(name, entry);
    restart();
  };
  let isolate = createSnapshotIsolate(ivm, snapshot, 128, () => {});
  for (let i = 0; i < runs; i += 1) {
    restart();
    if (i > 0 && i % maxRuns === 0) {
      isolate.dispose();
      isolate = createSnapshotIsolate(ivm, snapshot, 128, () => {});
    }
    const blank = await createBlankContext(ivm, isolate);
    mark('blank context (between jobs)');
    if (values.profile) blank.isolate.startCpuProfiler('run');
    const host = createIsolateHost({ runId: 'run-1', respond: async () => {}, log: () => {} });
    const run = openRunIsolate({
      ivm,
      blank,
      runId: 'run-1',
      memoryMb: 128,
      cpuLimitMs: 10_000,
      deadline: performance.now() + 60_000,
      host,
    });
    mark('open (the run takes it)');
    const scope: Record<string, unknown> = {};
    scope.trigger = (
      JSON.parse(await run.call('runTrigger', JSON.stringify(trigger))) as { output?: unknown }
    ).output;
    mark('trigger');
    await runAction(run, math, scope);
    mark('piece action');
    const resolved = { input: resolveTemplates({ sum: '{{step_1.result}}' }, scope) };
    mark('code step: input');
    const output = await run.runCode({
      source,
      inputs: resolved.input,
      timeoutMs: 10_000,
      memoryMb: 128,
      host: noSession,
    });
    mark('code step: code');
    scope.step_2 = output;
    mark('code step: output');
    await runAction(run, respond, scope);
    mark('response action');
    if (values.profile) {
      for (const { profile } of await blank.isolate.stopCpuProfiler('run')) {
        const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
        profile.samples.forEach((id, index) => {
          const frame = nodes.get(id)?.callFrame;
          const key = `${frame?.functionName || '(anonymous)'} ${frame?.url.split('/').pop()}`;
          selfTime.set(key, (selfTime.get(key) ?? 0) + (profile.timeDeltas[index + 1] ?? 0));
        });
      }
      restart();
    }
    run.close();
    mark('release');
  }
  isolate.dispose();
  const median = (list: number[]) => {
    const sorted = list.slice(Math.floor(list.length / 10)).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  const mean = (list: number[]) => list.reduce((sum, value) => sum + value, 0) / Math.max(1, list.length);
  const phaseLine = (name: string, { cpu, wall }: { cpu: number[]; wall: number[] }) =>
    `${name.padEnd(30)} cpu ${median(cpu).toFixed(3)} ms  wall ${median(wall).toFixed(3)} ms  mean cpu ${mean(cpu).toFixed(3)} ms\n`;
  let onPath = 0;
  for (const [name, phase] of samples) {
    if (!name.includes('between') && name !== 'release') onPath += median(phase.cpu);
    process.stdout.write(phaseLine(name, phase));
  }
  process.stdout.write(`on the run's path (open to response), cpu ${onPath.toFixed(3)} ms\n`);
  for (const [key, us] of [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    process.stdout.write(`  ${(us / runs / 1000).toFixed(4)} ms  ${key}\n`);
  }
  samples.clear();
  for (let i = 0; i < runs; i += 1) {
    restart();
    const empty = new ivm.Isolate({ memoryLimit: 128 });
    const context = await empty.createContext();
    await context.evalClosure('return $0 + 1;', [1]);
    empty.dispose();
    mark('floor: empty isolate, one call');
  }
  for (const [name, phase] of samples) process.stdout.write(phaseLine(name, phase));
} finally {
  isolated.close();
  await rm(dir, { recursive: true, force: true });
}
