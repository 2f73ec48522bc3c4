// What ENGINE_PID_NAMESPACE costs a cold engine: fork → `ready` of the built engine
// (apps/engine/dist/engine.mjs), forked directly and under the PID-namespace launcher,
// alternating, N times each. Usage: node apps/worker/scripts/measure-pid-namespace.ts [N]
import { createRequire } from 'node:module';
import { createLogger } from '@flowbox/node-kit';
import { startEngineProcess } from '../src/engines/engine-process.ts';
import { pidNamespaceLauncher } from '../src/sandbox/bubblewrap.ts';

const runs = Number(process.argv[2] ?? 20);
const entry = createRequire(import.meta.url).resolve('@flowbox/engine/bundle');
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
    const engine = await startEngineProcess({ entry, logger, ...options });
    list.push(engine.bootMs);
    await engine.kill();
  }
}
console.log(
  JSON.stringify({
    runs,
    directMedianMs: Number(median(direct).toFixed(1)),
    pidNamespaceMedianMs: Number(median(namespaced).toFixed(1)),
    extraMs: Number((median(namespaced) - median(direct)).toFixed(1)),
  }),
);
