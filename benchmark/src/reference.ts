import type { ScenarioResult } from './result-types.ts';

/**
 * The reference system's published figures (Activepieces' worker-is-the-sandbox benchmark and
 * its experiments log, ../shared/reference/). They ran on GKE with workers capped at 0.5 vCPU
 * and apps at 1 vCPU, against a same-region object store: different hardware and a different
 * network, so the ratios below say how far apart the systems are, not which machine is faster.
 */
export const REFERENCE = {
  warmReqPerSecPerWorker: { low: 4.3, high: 5.1 },
  warmWorkerBusyMs: 218,
  coldBootMs: 1167,
  coldEndToEndMs: 1984,
} as const;

export interface ComparisonRow {
  figure: string;
  scenario: string;
  flowbox: number;
  unit: string;
  reference: string;
  /** How many times better flowbox is (>1 = flowbox faster or higher); a range against a range. */
  advantage: { low: number; high: number } | null;
}

/** Rows only for scenarios shaped like the reference's: connections matched to the workers. */
export function compareWithReference(results: readonly ScenarioResult[]): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  const matched = results.filter((r) => r.summary !== null && r.scenario.connections === r.scenario.workers);
  const higherIsBetter = (value: number, low: number, high: number) =>
    value > 0 ? { low: value / high, high: value / low } : null;
  const lowerIsBetter = (value: number, reference: number) =>
    value > 0 ? { low: reference / value, high: reference / value } : null;
  for (const r of matched.filter((m) => effectiveMode(m) === 'warm')) {
    const perWorker = r.summary?.reqPerSecPerWorker?.median;
    if (perWorker !== undefined) {
      const { low, high } = REFERENCE.warmReqPerSecPerWorker;
      rows.push({
        figure: 'warm req/s per worker',
        scenario: r.scenario.name,
        flowbox: perWorker,
        unit: 'req/s',
        reference: `${low}–${high}`,
        advantage: higherIsBetter(perWorker, low, high),
      });
    }
    const busy = r.summary?.anatomy?.workerBusyMs?.mean?.median;
    if (busy !== undefined) {
      rows.push({
        figure: 'warm worker-busy per job (mean)',
        scenario: r.scenario.name,
        flowbox: busy,
        unit: 'ms',
        reference: `~${REFERENCE.warmWorkerBusyMs}`,
        advantage: lowerIsBetter(busy, REFERENCE.warmWorkerBusyMs),
      });
    }
  }
  for (const r of matched.filter((m) => effectiveMode(m) === 'cold')) {
    const boot = r.summary?.anatomy?.bootMs?.mean?.median;
    if (boot !== undefined) {
      rows.push({
        figure: `cold engine boot on the request path (mean)`,
        scenario: r.scenario.name,
        flowbox: boot,
        unit: 'ms',
        reference: REFERENCE.coldBootMs.toLocaleString('en-US'),
        advantage: lowerIsBetter(boot, REFERENCE.coldBootMs),
      });
    }
    const endToEnd = r.summary?.latency.mean?.median;
    if (endToEnd !== undefined) {
      rows.push({
        figure: 'cold end-to-end latency (client, mean)',
        scenario: r.scenario.name,
        flowbox: endToEnd,
        unit: 'ms',
        reference: REFERENCE.coldEndToEndMs.toLocaleString('en-US'),
        advantage: lowerIsBetter(endToEnd, REFERENCE.coldEndToEndMs),
      });
    }
  }
  return rows;
}

/**
 * Warm or cold. A deployment under --target does not say which it runs, so its runs tell: mostly
 * fresh engines (each its first job) means cold.
 */
function effectiveMode(r: ScenarioResult): 'warm' | 'cold' | null {
  switch (r.scenario.mode) {
    case 'warm':
      return 'warm';
    case 'cold':
    case 'cold-prewarm':
      return 'cold';
    case 'isolate':
      // Cold-grade separation in a reused engine: neither of the reference's rows measures it.
      return null;
    case 'target': {
      const fresh = r.summary?.engines?.freshShare;
      return fresh === null || fresh === undefined ? null : fresh < 0.5 ? 'warm' : 'cold';
    }
    case 'sim':
      // No engine ran: a simulated fleet measures the shared tiers, not warm or cold engines.
      return null;
    case 'loop100':
    case 'router':
    case 'pause':
    case 'delay':
    case 'nodelay':
      // Another flow than the reference's: compare it with warm-1a1w-c1 of the same run.
      return null;
  }
}

export function fmtAdvantage(advantage: ComparisonRow['advantage']): string {
  if (advantage === null) return 'n/a (0 on the path)';
  const f = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 0 : 1));
  return advantage.low === advantage.high
    ? `${f(advantage.low)}×`
    : `${f(advantage.low)}–${f(advantage.high)}×`;
}
