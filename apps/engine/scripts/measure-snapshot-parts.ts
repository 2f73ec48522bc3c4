/**
 * What each part of a run's isolate snapshot costs: each part is bundled alone (as
 * scripts/build/isolate-framework.ts bundles the whole), made into a snapshot, and measured as the
 * engine uses one: a blank isolate from it (`new Isolate({ snapshot })` and `createContext`,
 * disposed), and a fresh context in one reused isolate (made and released). Process CPU (every
 * thread, isolated-vm's included) and wall, medians over N (the first tenth left out), with the
 * snapshot's size and the heap a blank isolate holds. The parts: nothing, the web polyfills
 * (inside/: URL, text codecs, structured clone, crypto), the pieces framework (with what it takes
 * of the protocol), the templates, zod alone (what the framework script held before pieces
 * declared inputs as data), the whole framework script (`dist/isolate-framework.js`, warmed up as
 * the engine does) and that with the built-in pieces. `--compare <file>`: another framework script
 * measured beside it (a build of an earlier commit). Needs `pnpm build`.
 *
 *   node apps/engine/scripts/measure-snapshot-parts.ts [--runs 300] [--compare <isolate-framework.js>]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { zodEnglishOnly } from '@flowbox/pieces-build';
import { build } from 'esbuild';
import type { ExternalCopy } from 'isolated-vm';
import { createIsolatedVmRunner } from '../src/code-steps/isolated-vm-runner.ts';
import { loadIsolateFramework } from '../src/isolate/isolate-framework.ts';
import { createIsolateSnapshots } from '../src/isolate/isolate-snapshots.ts';
import { unpackBuiltPieces } from '../test/support/artifacts.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '300' }, compare: { type: 'string' } },
});
const runs = Number(values.runs);
const inside = resolve(import.meta.dirname, '../src/isolate/inside');

/** One part as a classic script: `source` (an ES module importing the part) bundled. */
async function part(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: inside, loader: 'ts' },
    bundle: true,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2024',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    plugins: [zodEnglishOnly],
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]?.text ?? '';
}

const PARTS: Record<string, string> = {
  'web polyfills': `
    import { structuredClone } from './structured-clone.ts';
    import { atob, btoa, IsolateTextDecoder, IsolateTextEncoder } from './text-codecs.ts';
    import { IsolateURL, IsolateURLSearchParams } from './url.ts';
    import { crypto } from './web-crypto.ts';
    Object.assign(globalThis, { structuredClone, atob, btoa, TextDecoder: IsolateTextDecoder,
      TextEncoder: IsolateTextEncoder, URL: IsolateURL, URLSearchParams: IsolateURLSearchParams, crypto });`,
  'pieces framework': `import * as framework from '@flowbox/pieces-framework'; globalThis.__framework = framework;`,
  templates: `import { resolveTemplates } from '../../steps/template.ts'; globalThis.__templates = resolveTemplates;`,
  'zod alone': `import * as z from 'zod'; globalThis.__zod = z;`,
};

const isolated = createIsolatedVmRunner({ onCatastrophicError: () => {} });
const dir = await mkdtemp(join(tmpdir(), 'flowbox-snapshot-parts-'));
try {
  const ivm = await isolated.library();
  const median = (list: number[]) => {
    const sorted = list.slice(Math.floor(list.length / 10)).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };

  const measure = async (name: string, blob: ExternalCopy<ArrayBuffer>) => {
    const blank = { cpu: [] as number[], wall: [] as number[] };
    let heapKb = 0;
    for (let i = 0; i < runs; i += 1) {
      const cpu = process.cpuUsage();
      const wall = performance.now();
      const isolate = new ivm.Isolate({ snapshot: blob, memoryLimit: 128 });
      const context = await isolate.createContext();
      blank.cpu.push(cpuMs(cpu));
      blank.wall.push(performance.now() - wall);
      if (i === 0) heapKb = Math.round((await isolate.getHeapStatistics()).used_heap_size / 1024);
      context.release();
      isolate.dispose();
    }
    const reused = new ivm.Isolate({ snapshot: blob, memoryLimit: 128 });
    const context = { cpu: [] as number[], wall: [] as number[] };
    for (let i = 0; i < runs; i += 1) {
      const cpu = process.cpuUsage();
      const wall = performance.now();
      const made = await reused.createContext();
      made.release();
      context.cpu.push(cpuMs(cpu));
      context.wall.push(performance.now() - wall);
    }
    reused.dispose();
    const row = {
      part: name,
      snapshotKb: Math.round(blob.copy().byteLength / 1024),
      heapKb,
      blankIsolateCpuMs: Number(median(blank.cpu).toFixed(3)),
      blankIsolateWallMs: Number(median(blank.wall).toFixed(3)),
      contextCpuMs: Number(median(context.cpu).toFixed(3)),
      contextWallMs: Number(median(context.wall).toFixed(3)),
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
  };

  await measure('nothing (empty snapshot)', ivm.Isolate.createSnapshot([]));
  for (const [name, source] of Object.entries(PARTS)) {
    const code = await part(source);
    process.stdout.write(`${JSON.stringify({ part: name, scriptKb: Math.round(code.length / 1024) })}\n`);
    await measure(name, ivm.Isolate.createSnapshot([{ code }]));
  }
  const framework = await loadIsolateFramework();
  const warmUp = '__flowbox.warmUp();';
  await measure('framework script (entry.ts)', ivm.Isolate.createSnapshot([{ code: framework }], warmUp));
  if (values.compare !== undefined) {
    const other = await readFile(values.compare, 'utf8');
    await measure(`--compare ${values.compare}`, ivm.Isolate.createSnapshot([{ code: other }], warmUp));
  }
  const withPieces = await createIsolateSnapshots({
    library: isolated.library,
    framework: loadIsolateFramework,
    log: () => {},
  }).forPieces(await unpackBuiltPieces(dir));
  await measure("framework script + the 3 built-in pieces (the engine's snapshot)", withPieces.blob);
} finally {
  isolated.close();
  await rm(dir, { recursive: true, force: true });
}
