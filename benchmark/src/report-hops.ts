import { fmt, mdTable } from './format.ts';
import type { HopRow } from './hops.ts';
import type { BenchReport } from './result-types.ts';

const HEADERS = ['hop', 'mean ms', 'p50 ms', 'p90 ms', 'traces'];
const cells = (r: HopRow) => [r.hop, fmt(r.meanMs, 2), fmt(r.p50Ms, 2), fmt(r.p90Ms, 2), String(r.traces)];

/** `--hops`: per scenario, the caller's path hop by hop, then the worker's work after the answer. */
export function hopsSection(report: BenchReport): string[] {
  const traced = report.scenarios.filter((r) => r.hops !== undefined && r.hops.traces > 0);
  if (traced.length === 0) return [];
  const out = [
    '## Hops',
    '',
    "Each request's trace (`--hops` runs apps and workers with tracing on, exporting to a receiver in the runner; every figure in this report includes tracing's cost). Hops are the gaps between span boundaries of one trace on one machine's clock: from the webhook's arrival to its answer, then what the worker still does after it. Means and percentiles are over the measured repeats' traces.",
    '',
  ];
  for (const r of traced) {
    const hops = r.hops;
    if (hops === undefined) continue;
    out.push(
      `### ${r.scenario.name}: ${hops.traces} traces`,
      '',
      mdTable(HEADERS, [...hops.caller.map(cells), cells(hops.answered)]),
      '',
      'After the answer:',
      '',
      mdTable(HEADERS, hops.afterAnswer.map(cells)),
      '',
    );
  }
  return out;
}
