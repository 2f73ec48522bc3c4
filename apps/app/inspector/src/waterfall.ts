/**
 * The latency anatomy of one run as waterfall rows: where each part starts and how long it
 * takes, in milliseconds from the moment the run was accepted. Pure (no DOM), so it is tested
 * on its own (apps/app/test/inspector-waterfall.test.ts).
 *
 * The parts follow each other in the worker (docs/architecture.md, Latency anatomy): queue,
 * then provision, boot, run and log upload inside the worker's busy time. Steps sit inside the
 * run, placed by their own start times relative to the first step (the engine's clock, so no
 * comparison across machines' clocks is needed).
 */
export interface WaterfallRow {
  label: string;
  /** `total`, `queue`, `worker`, `provision`, `boot`, `run`, `log`, `step`, `step-failed`, `lane`. */
  kind: string;
  depth: number;
  startMs: number;
  durationMs: number;
  /** A lane's bars: one per step of a loop's iteration, on the same time scale. */
  bars?: { label: string; kind: string; startMs: number; durationMs: number }[];
}

export interface WaterfallTimings {
  queueMs: number;
  provisionMs: number;
  provision?: { bundleMs: number; piecesMs: number; engineMs: number } | undefined;
  bootMs: number;
  runMs: number;
  logPersistMs: number;
  workerBusyMs: number;
  totalMs?: number | undefined;
}

export interface WaterfallStep {
  name: string;
  /** Where it ran in the flow's tree (`each[3]/check`); labels the row when present. */
  path?: string | undefined;
  status: string;
  startedAt: string;
  durationMs: number;
}

export interface Waterfall {
  rows: WaterfallRow[];
  /** The scale's end: the longest row's end. */
  spanMs: number;
}

export function buildWaterfall(timings: WaterfallTimings | null, steps: WaterfallStep[]): Waterfall {
  const rows: WaterfallRow[] = [];
  const row = (label: string, kind: string, depth: number, startMs: number, durationMs: number) =>
    rows.push({ label, kind, depth, startMs, durationMs: Math.max(0, durationMs) });
  let runStart = 0;
  if (timings !== null) {
    const busyStart = timings.queueMs;
    if (timings.totalMs !== undefined) row('total', 'total', 0, 0, timings.totalMs);
    row('queue', 'queue', 0, 0, timings.queueMs);
    row('worker busy', 'worker', 0, busyStart, timings.workerBusyMs);
    row('provision', 'provision', 1, busyStart, timings.provisionMs);
    const parts = timings.provision;
    if (parts !== undefined && timings.provisionMs > 0) {
      // The three are measured one after the other inside provisionMs.
      let at = busyStart;
      for (const [label, value] of [
        ['bundle', parts.bundleMs],
        ['pieces', parts.piecesMs],
        ['engine bundle', parts.engineMs],
      ] as const) {
        row(label, 'provision', 2, at, value);
        at += value;
      }
    }
    const bootStart = busyStart + timings.provisionMs;
    row('boot', 'boot', 1, bootStart, timings.bootMs);
    runStart = bootStart + timings.bootMs;
    row('run', 'run', 1, runStart, timings.runMs);
  }
  const first = steps[0] === undefined ? 0 : Date.parse(steps[0].startedAt);
  const lanes = new Map<string, WaterfallRow>();
  for (const step of steps) {
    // A skipped step (a branch not taken) did not run: it has no place in time.
    if (step.status === 'SKIPPED') continue;
    const startMs = runStart + Math.max(0, Date.parse(step.startedAt) - first);
    const kind = step.status === 'FAILED' ? 'step-failed' : 'step';
    const depth = timings === null ? 0 : 2;
    const path = step.path ?? step.name;
    const lane = laneOf(path);
    if (lane === null) {
      row(path, kind, depth, startMs, step.durationMs);
      continue;
    }
    // A loop's iteration is one lane: iterations that ran at once lie side by side in time.
    const bar = { label: path, kind, startMs, durationMs: Math.max(0, step.durationMs) };
    const existing = lanes.get(lane);
    if (existing === undefined) {
      const laneKind = kind === 'step-failed' ? 'lane lane-failed' : 'lane';
      const created = {
        label: lane,
        kind: laneKind,
        depth,
        startMs,
        durationMs: bar.durationMs,
        bars: [bar],
      };
      lanes.set(lane, created);
      rows.push(created);
    } else {
      const end = Math.max(existing.startMs + existing.durationMs, startMs + bar.durationMs);
      existing.startMs = Math.min(existing.startMs, startMs);
      existing.durationMs = end - existing.startMs;
      existing.bars?.push(bar);
      if (kind === 'step-failed') existing.kind = 'lane lane-failed';
    }
  }
  if (timings !== null) row('log upload', 'log', 1, runStart + timings.runMs, timings.logPersistMs);
  const spanMs = rows.reduce((end, r) => Math.max(end, r.startMs + r.durationMs), 0);
  return { rows, spanMs };
}

/** The innermost loop iteration a step ran in (`orders[1]/parts[0]` of `orders[1]/parts[0]/label`), or null. */
function laneOf(path: string): string | null {
  const end = path.lastIndexOf(']');
  return end === -1 ? null : path.slice(0, end + 1);
}

/** A scale's end rounded up to 1, 2 or 5 × a power of ten, and its ticks. */
export function niceScale(maxValue: number, ticks = 4): { max: number; step: number } {
  if (!(maxValue > 0)) return { max: 1, step: 1 / ticks };
  const rough = maxValue / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power;
  return { max: step * Math.ceil(maxValue / step), step };
}
