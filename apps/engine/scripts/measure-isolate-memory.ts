/**
 * Engine memory over many isolate runs of the seeded (benchmark) flow in one engine: heap used,
 * RSS and external memory after a forced GC once warm (`--warm` runs) and at each of `--at`,
 * with the change against the warm sample (the target: within 10 %). One line of JSON per
 * setting; `--isolation shared` gives the control. Needs `pnpm build` (the isolate framework).
 *
 *   node apps/engine/scripts/measure-isolate-memory.ts [--runs 10000] [--warm 200] [--at 1000,5000,10000]
 *     [--max-runs 100] [--isolation isolate]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_ISOLATE_MAX_RUNS } from '../src/isolate/run-isolation.ts';
import { soakRuns } from '../test/support/run-soak.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    warm: { type: 'string', default: '200' },
    at: { type: 'string', default: '1000,5000,10000' },
    'max-runs': { type: 'string', default: String(DEFAULT_ISOLATE_MAX_RUNS) },
    isolation: { type: 'string', default: 'isolate' },
  },
});
const isolation = values.isolation === 'shared' ? 'shared' : 'isolate';
const warm = Number(values.warm);
const samplesAt = [warm, ...values.at.split(',').map(Number)];
const loadBefore = loadavg();
const report = await soakRuns({
  runs: Number(values.runs),
  isolation,
  maxRunsPerIsolate: Number(values['max-runs']),
  samplesAt,
});
const base = report.samples[0];
const change = (value: number, from: number | undefined) =>
  from === undefined || from === 0 ? null : `${(((value - from) / from) * 100).toFixed(1)} %`;
process.stdout.write(
  `${JSON.stringify({
    loadavg: { before: loadBefore.map((n) => n.toFixed(2)), after: loadavg().map((n) => n.toFixed(2)) },
    ...report,
    samples: report.samples.map((sample) => ({
      ...sample,
      heapChange: change(sample.heapUsedMb, base?.heapUsedMb),
      rssChange: change(sample.rssMb, base?.rssMb),
    })),
  })}\n`,
);
