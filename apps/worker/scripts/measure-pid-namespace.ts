// What ENGINE_PID_NAMESPACE costs a cold engine: fork → `ready` of the built engine
// (apps/engine/dist/engine.mjs), forked directly and under the PID-namespace launcher,
// alternating, N times each; `--snapshot` starts it from its startup snapshot (the default in
// a worker), built into a temporary copy of the engine's folder.
// Usage: node apps/worker/scripts/measure-pid-namespace.ts [N] [--snapshot]
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@flowbox/node-kit';
import { isolatedVmPackageDir } from '../src/engines/engine-install.ts';
import { startEngineProcess } from '../src/engines/engine-process.ts';
import { ensureEngineSnapshot } from '../src/engines/engine-snapshot.ts';
import { pidNamespaceLauncher } from '../src/sandbox/bubblewrap.ts';

const runs = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 20);
const bundle = createRequire(import.meta.url).resolve('@flowbox/engine/bundle');
const useSnapshot = process.argv.includes('--snapshot');
// The snapshot is built beside the engine, as the worker does in its cache.
const dir = await mkdtemp(path.join(tmpdir(), 'flowbox-measure-'));
await cp(path.dirname(bundle), dir, { recursive: true });
// As the worker installs it: isolated-vm beside the bundle.
await mkdir(path.join(dir, 'node_modules'));
await symlink(isolatedVmPackageDir(), path.join(dir, 'node_modules', 'isolated-vm'), 'dir');
const entry = path.join(dir, path.basename(bundle));
const snapshotBlob = useSnapshot ? await ensureEngineSnapshot(dir) : undefined;
const logger = createLogger({ name: 'measure', level: 'warn' });
const launcher = pidNamespaceLauncher([]);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const direct: number[] = [];
const namespaced: number[] = [];
for (let i = 0; i < runs; i += 1) {
  for (const [list, options] of [
    [direct, {}],
    [namespaced, { launcher }],
  ] as const) {
    const engine = await startEngineProcess({ entry, snapshotBlob, logger, ...options });
    list.push(engine.bootMs);
    await engine.kill();
  }
}
console.log(
  JSON.stringify({
    runs,
    snapshot: useSnapshot,
    directMedianMs: Number(median(direct).toFixed(1)),
    pidNamespaceMedianMs: Number(median(namespaced).toFixed(1)),
    extraMs: Number((median(namespaced) - median(direct)).toFixed(1)),
  }),
);
await rm(dir, { recursive: true, force: true });
