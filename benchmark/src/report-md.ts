import { cpuBudgetSection } from './cpu-budget.ts';
import { fmt, fmtMedian, mdTable } from './format.ts';
import { logLinesSection } from './log-tally.ts';
import { PROCESS_KINDS } from './proc-stats.ts';
import { compareWithReference, fmtAdvantage } from './reference.ts';
import { durableSection } from './report-durable.ts';
import { fleetSection } from './report-fleet.ts';
import { hopsSection } from './report-hops.ts';
import {
  allKindsCpuMsPerRequest,
  machineCpuMsPerRequest,
  RATIO_HEADERS,
  ratioRows,
} from './report-ratios.ts';
import { COST_HEADERS, costRow, SUMMARY_HEADERS, summaryRow } from './report-tables.ts';
import type { BenchReport, RepeatResult, ScenarioResult } from './result-types.ts';
import { TIMING_FIELDS } from './runs-api.ts';

/** The human report: setup, tables, the comparison with the reference, and how to read them. */
export function renderMarkdown(report: BenchReport, svgFileName: string): string {
  const m = report.machine;
  const ok = report.scenarios.filter((r) => r.summary !== null);
  const [l1, l5, l15] = m.loadAverageAtStart;
  // null: a line that does not apply to this run.
  const out: (string | null)[] = [
    `# flowbox benchmark: ${report.startedAt.slice(0, 10)} on ${m.hostname}`,
    '',
    `Suite \`${report.suite}\`${report.aborted ? ' (**stopped early with Ctrl-C**)' : ''}: ${report.settings.repeats} measured repeat(s) of ${report.settings.durationS} s per scenario after ${report.settings.warmupPerWorker} warm-up requests per worker, workers in EXECUTION_MODE=${report.settings.executionMode ?? 'SANDBOX_CODE_ONLY'}. Figures are medians over the repeats, with (min–max) where they differ.`,
    '',
    '## Setup',
    '',
    `- Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB RAM, Linux ${m.kernel}. Load average when the run started: ${l1.toFixed(2)} / ${l5.toFixed(2)} / ${l15.toFixed(2)} (1/5/15 min)${l1 > m.cores * 0.5 ? ' — **other work was running on this machine; treat the figures as rough**' : ''}.`,
    `- Everything ran on this one machine: load generator, app and worker processes, engines, ${report.services.postgres}, ${report.services.redis}, ${report.services.s3}.`,
    `- Node ${m.node}; ${Object.entries(m.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')}.`,
    `- Command: \`${report.commandLine}\``,
    report.target === null
      ? null
      : `- Target: ${report.target} (processes not on this machine: CPU, memory, Redis and Postgres not measured)`,
    ...(report.services.network === undefined ? [] : [`- Network: ${report.services.network}.`]),
    `- Measured: ${report.services.measured.join('; ')}.`,
    report.services.notMeasured.length === 0
      ? null
      : `- Not measured: ${report.services.notMeasured.join('; ')}.`,
    '',
    '## Summary',
    '',
    mdTable(SUMMARY_HEADERS, report.scenarios.map(summaryRow)),
    '',
    'Latencies are client-side (autocannon, 2xx only). `busy ms` is the mean worker-busy time per job, `boot ms` the mean engine boot on the request path (0 when the engine was reused or booted ahead of the job).',
    '',
    `![throughput and latency anatomy](${svgFileName})`,
    '',
    ...baselineSection(report),
    ...fleetSection(report),
    ...durableSection(report),
    ...hopsSection(report),
    '## Cost per request',
    '',
    "Counters read before and after each repeat, divided by the runs that succeeded in that window (requests cut off at the end of the load still ran and are counted). Redis commands include those BullMQ runs inside its Lua scripts; round trips are the server's socket reads (a pipeline counts once). Postgres statements are top-level statements of the app's role from pg_stat_statements, BEGIN/COMMIT included; transactions come from pg_stat_database, whose counters backends flush lazily, hence approximate. The idle columns are the rates with no load at all (BullMQ's blocking polls and periodic checks), measured for 2 s after the warm-up: every window includes some of that background.",
    '',
    mdTable(COST_HEADERS, ok.map(costRow)),
    '',
    '## Latency anatomy',
    '',
    "From the runs' recorded timings: mean / p50 in ms (medians over repeats). Worker-busy covers provision, boot, run and log persist; total runs from the webhook's acceptance to the recorded result.",
    '',
    mdTable(
      ['scenario', ...TIMING_FIELDS.map((f) => f.replace(/Ms$/, '')), 'engine pre-booted', 'fresh engine'],
      ok.map((r) => [
        r.scenario.name,
        ...TIMING_FIELDS.map((f) => {
          const layer = r.summary?.anatomy?.[f];
          return layer === undefined ? '–' : `${fmtMedian(layer.mean)} / ${fmtMedian(layer.p50)}`;
        }),
        percent(r.summary?.engines?.preBootedShare),
        percent(r.summary?.engines?.freshShare),
      ]),
    ),
    '',
    ...processTables(ok),
    ...cpuBudgetSection(ok),
    '## Against the reference system',
    '',
    `The reference figures are Activepieces' published GKE benchmark (workers capped at 0.5 vCPU, apps at 1 vCPU, a same-region object store over the network). **The hardware, the network and the fleet size differ** (${report.target === null ? 'here: one machine, loopback, a handful of processes sharing its cores' : `here: the deployment at ${report.target}`}), so these ratios say how far apart the designs land, not a like-for-like race. Advantage > 1 means flowbox is faster or higher; against a range it is given as a range.${report.target === null ? '' : ' A deployment counts as cold when most of its runs had a fresh engine.'}`,
    '',
    mdTable(
      ['figure', 'scenario', 'flowbox', 'reference', 'advantage'],
      compareWithReference(report.scenarios).map((row) => [
        row.figure,
        row.scenario,
        `${fmt(row.flowbox, row.unit === 'req/s' ? 2 : 1)} ${row.unit}`,
        `${row.reference} ${row.unit}`,
        fmtAdvantage(row.advantage),
      ]),
    ),
    '',
    ...breakdownSections(ok),
    // A deployment's processes print to its own logs, not to this runner.
    ...(report.target === null
      ? logLinesSection([
          { label: '', scenarios: report.scenarios },
          { label: ' (baseline)', scenarios: report.baseline?.scenarios ?? [] },
        ])
      : []),
    ...failures(report.scenarios),
  ];
  const lines = out.filter((line): line is string => line !== null);
  return `${lines.filter((line, i) => !(line === '' && lines[i - 1] === '')).join('\n')}\n`;
}

function percent(share: number | null | undefined): string {
  return share === null || share === undefined ? '–' : `${Math.round(share * 100)}%`;
}

function processTables(results: readonly ScenarioResult[]): string[] {
  const kinds = PROCESS_KINDS.filter((k) => results.some((r) => r.summary?.processes[k] !== undefined));
  if (kinds.length === 0) return [];
  return [
    '## CPU and memory per process kind',
    '',
    "CPU from /proc (utime+stime; engines that exit are counted through their worker's reaped-children time) over the load plus settling window: CPU seconds, cores kept busy (CPU seconds per second of window) and CPU ms per request. Memory: the largest single process's peak RSS (VmHWM) and the largest sampled sum over the kind, in MB. `loadgen` is the runner process (autocannon plus its own sampling).",
    '',
    mdTable(
      ['scenario', ...kinds.map((k) => `${k} CPU s / cores`)],
      results.map((r) => [
        r.scenario.name,
        ...kinds.map((k) => {
          const p = r.summary?.processes[k];
          return p === undefined ? '–' : `${fmtMedian(p.cpuSeconds, 2)} / ${fmtMedian(p.cores, 2)}`;
        }),
      ]),
    ),
    '',
    mdTable(
      ['scenario', ...kinds.map((k) => `${k} CPU ms/req`), 'all kinds', 'whole machine'],
      results.map((r) => [
        r.scenario.name,
        ...kinds.map((k) => fmtMedian(r.summary?.processes[k]?.cpuMsPerRequest, 2)),
        fmt(allKindsCpuMsPerRequest(r), 2),
        fmt(machineCpuMsPerRequest(r), 2),
      ]),
    ),
    '',
    "`whole machine` is the machine's busy CPU over the same window (/proc/stat: user, nice, system, irq, softirq), per request: the kinds, plus interrupts no process is charged with, plus what the kinds miss (a SANDBOXED engine killed in its PID namespace is reaped by no process of ours, so its CPU shows here and not under `engine`), plus anything else that ran on the machine.",
    '',
    mdTable(
      ['scenario', ...kinds.map((k) => `${k} peak MB (one / all)`)],
      results.map((r) => [
        r.scenario.name,
        ...kinds.map((k) => {
          const p = r.summary?.processes[k];
          return p === undefined ? '–' : `${fmt(p.peakRssMb, 0)} / ${fmt(p.peakTotalRssMb, 0)}`;
        }),
      ]),
    ),
    '',
  ];
}

/** Per-command and per-statement counts for the first scenario of each mode, from its median repeat. */
function breakdownSections(results: readonly ScenarioResult[]): string[] {
  const firstOfMode = new Map<string, ScenarioResult>();
  for (const r of results) if (!firstOfMode.has(r.scenario.mode)) firstOfMode.set(r.scenario.mode, r);
  const out: string[] = [];
  for (const r of firstOfMode.values()) {
    const repeat = medianRepeat(r.repeats);
    if (repeat === null || repeat.requests === 0 || (repeat.redis === null && repeat.postgres === null))
      continue;
    out.push(`## Where the round trips go: ${r.scenario.name}`, '');
    out.push(`Repeat ${repeat.index + 1} (the median by throughput), per successful request.`, '');
    if (repeat.redis !== null) {
      const commands = Object.entries(repeat.redis.perCommand).sort((a, b) => b[1] - a[1]);
      out.push(
        mdTable(
          ['Redis command', 'per request'],
          commands.map(([name, calls]) => [`\`${name}\``, fmt(calls / repeat.requests, 2)]),
        ),
        '',
      );
    }
    if (repeat.postgres !== null && repeat.postgres.top.length > 0) {
      out.push(
        mdTable(
          ['Postgres statement', 'per request'],
          repeat.postgres.top.map((s) => [
            `\`${truncate(s.query, 140)}\``,
            fmt(s.calls / repeat.requests, 2),
          ]),
        ),
        '',
      );
    }
  }
  return out;
}

function medianRepeat(repeats: readonly RepeatResult[]): RepeatResult | null {
  const sorted = [...repeats].sort((a, b) => a.load.reqPerSec - b.load.reqPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? null;
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function failures(results: readonly ScenarioResult[]): string[] {
  const failed = results.filter((r) => r.status !== 'ok');
  if (failed.length === 0) return [];
  return [
    '## Scenarios that did not finish',
    '',
    ...failed.map((r) => `- \`${r.scenario.name}\` (${r.status}): ${(r.error ?? '').split('\n')[0]}`),
    '',
  ];
}

/** `--baseline`: both sides' figures and their ratio, then the baseline's own summary. */
function baselineSection(report: BenchReport): string[] {
  const b = report.baseline;
  if (b === undefined) return [];
  const tree = `${b.tree.sha.slice(0, 7)}${b.tree.dirty ? ' with uncommitted changes' : ''}`;
  const side = b.treeSide ?? {};
  const only = [
    ...(side.executionMode === undefined
      ? []
      : [
          `its workers ran in EXECUTION_MODE=${side.executionMode}, the baseline's in ${report.settings.executionMode ?? 'SANDBOX_CODE_ONLY'}`,
        ]),
    ...(side.traced === true ? ['it ran traced (the hop table is its), the baseline untraced'] : []),
  ];
  const differs = only.length === 0 ? '' : ` Only this tree's side changed: ${only.join('; ')}.`;
  return [
    `## Against the baseline: ${b.ref} (${b.sha.slice(0, 7)})`,
    '',
    `This tree is ${tree}.${differs} Each repeat ran once on the baseline's processes (its own worktree and build) and then once on this tree's, on the same stores, so drift in the machine's speed falls on both sides alike. Ratio = this tree / baseline: above 1 is better for req/s, below 1 is better for latency and cost.`,
    '',
    mdTable(RATIO_HEADERS, ratioRows(b.scenarios, report.scenarios)),
    '',
    "The baseline's summary:",
    '',
    mdTable(SUMMARY_HEADERS, b.scenarios.map(summaryRow)),
    '',
  ];
}
