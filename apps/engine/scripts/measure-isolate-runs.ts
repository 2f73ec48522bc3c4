/**
 * Engine CPU per run of the seeded flow, in the engine's realm (warm, `shared`) and each run in a
 * fresh isolate (`isolate`), in-process against a sink app, and the heap and RSS after a forced
 * GC once warm and at the end (flat = no leak per run). Needs `pnpm build` (the isolate framework).
 *
 *   node apps/engine/scripts/measure-isolate-runs.ts [--runs 2000]
 */
import { parseArgs } from 'node:util';
import { soakRuns } from '../test/support/run-soak.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '2000' } } });
const runs = Number(values.runs);
for (const isolation of ['shared', 'isolate'] as const) {
  process.stdout.write(`${JSON.stringify(await soakRuns({ runs, isolation }))}\n`);
}
