/**
 * Engine CPU per run of the seeded flow, in the engine's realm (warm, `shared`) and each run in a
 * fresh context of an isolate that serves `--max-runs` runs (`isolate`; 1: a fresh isolate per
 * run; a list compares several), in-process against a sink app, and the heap and RSS after a
 * forced GC once warm and at the end (flat = no leak per run). `--rounds` repeats the whole
 * list, alternating, so a change in the machine's load falls on every setting alike. Needs
 * `pnpm build` (the isolate framework).
 *
 * `--flow` runs another seeded flow: `loop100` (a loop over 100 items, a code and a math step
 * each) or `router` (a router of four branches before the benchmark flow's steps), to set what an
 * iteration or a router costs beside the benchmark flow's run.
 *
 *   node apps/engine/scripts/measure-isolate-runs.ts [--runs 2000] [--max-runs 1,100] [--rounds 1] [--flow benchmark|loop100|router]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BENCHMARK_FLOW, BENCHMARK_LOOP_FLOW, BENCHMARK_ROUTER_FLOW } from '@flowbox/protocol';
import { DEFAULT_ISOLATE_MAX_RUNS } from '../src/isolate/run-isolation.ts';
import { soakRuns } from '../test/support/run-soak.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    'max-runs': { type: 'string', default: String(DEFAULT_ISOLATE_MAX_RUNS) },
    rounds: { type: 'string', default: '1' },
    flow: { type: 'string', default: 'benchmark' },
  },
});
const FLOWS = { benchmark: BENCHMARK_FLOW, loop100: BENCHMARK_LOOP_FLOW, router: BENCHMARK_ROUTER_FLOW };
const flowName = values.flow;
if (!(flowName in FLOWS)) throw new Error(`--flow must be one of ${Object.keys(FLOWS).join(', ')}`);
const flow = FLOWS[flowName as keyof typeof FLOWS];
const runs = Number(values.runs);
const maxRuns = values['max-runs'].split(',').map(Number);
for (let round = 1; round <= Number(values.rounds); round += 1) {
  const reports = [await soakRuns({ runs, isolation: 'shared', flow })];
  for (const maxRunsPerIsolate of maxRuns) {
    reports.push(await soakRuns({ runs, isolation: 'isolate', maxRunsPerIsolate, flow }));
  }
  for (const report of reports) {
    process.stdout.write(
      `${JSON.stringify({ round, flow: flowName, loadavg: loadavg().map((n) => n.toFixed(2)), ...report })}\n`,
    );
  }
}
