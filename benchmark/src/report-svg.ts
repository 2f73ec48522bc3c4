import { SEGMENT_NAMES } from './anatomy.ts';
import { FIGURES, ratio } from './report-ratios.ts';
import type { BenchReport, ScenarioResult } from './result-types.ts';
import type { Mode } from './scenarios.ts';

/**
 * The report's chart, hand-written SVG: (1) throughput by worker count, one bar per mode, with
 * the repeats' min–max as whiskers (1 app, connections = workers); (2) the latency anatomy of
 * every scenario as stacked bars of mean milliseconds.
 */
const WIDTH = 900;
const FONT = 'font-family="system-ui, sans-serif" font-size="12"';
const MODE_COLORS: Record<Mode, string> = {
  warm: '#e4572e',
  'cold-prewarm': '#4c78a8',
  cold: '#72b7b2',
  isolate: '#54a24b',
  target: '#9d755d',
  sim: '#b279a2',
  loop100: '#ff9da6',
  router: '#79706e',
  pause: '#f58518',
  delay: '#8cd17d',
  nodelay: '#b6992d',
};
const SEGMENT_COLORS: Record<(typeof SEGMENT_NAMES)[number], string> = {
  queue: '#bab0ac',
  provision: '#eeca3b',
  boot: '#e45756',
  run: '#4c78a8',
  logPersist: '#72b7b2',
  workerOther: '#b279a2',
  afterWorker: '#9d755d',
};
const SEGMENT_LABELS: Record<(typeof SEGMENT_NAMES)[number], string> = {
  queue: 'queue',
  provision: 'provision',
  boot: 'boot',
  run: 'run',
  logPersist: 'log persist',
  workerOther: 'worker other',
  afterWorker: 'after worker',
};

export function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

/** Round tick steps (1, 2 or 5 × 10^k) covering 0..max in about `count` steps. */
export function niceTicks(max: number, count = 5): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const rough = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= rough) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let v = 0; v < max + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  if ((ticks[ticks.length - 1] ?? 0) < max) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

const n = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(1)) : 0);

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${n(x)}" y="${n(y)}" ${attrs}>${escapeXml(content)}</text>`;
}

function throughputChart(results: readonly ScenarioResult[], top: number): { svg: string; height: number } {
  const series = results.filter(
    (r) =>
      r.summary?.reqPerSec !== null &&
      r.summary !== null &&
      r.scenario.apps === 1 &&
      r.scenario.connections === r.scenario.workers,
  );
  const height = 300;
  const parts = [
    text(
      20,
      top + 20,
      'Throughput by worker count (1 app, connections = workers; median, whiskers min–max)',
      'font-weight="bold"',
    ),
  ];
  if (series.length === 0) {
    parts.push(text(20, top + 50, 'no scenario of this shape was measured'));
    return { svg: parts.join('\n'), height: 80 };
  }
  const workers = [...new Set(series.map((r) => r.scenario.workers))].sort((a, b) => a - b);
  const modes = [...new Set(series.map((r) => r.scenario.mode))];
  const maxValue = Math.max(...series.map((r) => r.summary?.reqPerSec?.max ?? 0));
  const ticks = niceTicks(maxValue);
  const yMax = ticks[ticks.length - 1] ?? 1;
  const plot = { left: 70, right: WIDTH - 170, top: top + 40, bottom: top + height - 40 };
  const y = (v: number) => plot.bottom - (v / yMax) * (plot.bottom - plot.top);
  for (const tick of ticks) {
    parts.push(
      `<line x1="${plot.left}" x2="${plot.right}" y1="${n(y(tick))}" y2="${n(y(tick))}" stroke="#ddd"/>`,
    );
    parts.push(text(plot.left - 8, y(tick) + 4, String(tick), 'text-anchor="end"'));
  }
  parts.push(
    text(
      20,
      (plot.top + plot.bottom) / 2,
      'req/s',
      `transform="rotate(-90 20 ${n((plot.top + plot.bottom) / 2)})" text-anchor="middle"`,
    ),
  );
  const groupWidth = (plot.right - plot.left) / workers.length;
  const barWidth = Math.min(50, (groupWidth * 0.8) / modes.length);
  workers.forEach((w, gi) => {
    const groupLeft = plot.left + gi * groupWidth + (groupWidth - barWidth * modes.length) / 2;
    parts.push(
      text(
        plot.left + (gi + 0.5) * groupWidth,
        plot.bottom + 18,
        `${w} worker${w === 1 ? '' : 's'}`,
        'text-anchor="middle"',
      ),
    );
    modes.forEach((mode, mi) => {
      const r = series.find((s) => s.scenario.workers === w && s.scenario.mode === mode);
      const spread = r?.summary?.reqPerSec;
      if (spread === null || spread === undefined) return;
      const x = groupLeft + mi * barWidth;
      parts.push(
        `<rect x="${n(x)}" y="${n(y(spread.median))}" width="${n(barWidth - 4)}" height="${n(plot.bottom - y(spread.median))}" fill="${MODE_COLORS[mode]}"><title>${escapeXml(`${r?.scenario.name}: ${spread.median.toFixed(1)} req/s`)}</title></rect>`,
      );
      const cx = x + (barWidth - 4) / 2;
      parts.push(
        `<line x1="${n(cx)}" x2="${n(cx)}" y1="${n(y(spread.min))}" y2="${n(y(spread.max))}" stroke="#222"/>`,
      );
      parts.push(
        text(
          cx,
          y(spread.max) - 4,
          spread.median.toFixed(spread.median < 10 ? 1 : 0),
          'text-anchor="middle" font-size="10"',
        ),
      );
    });
  });
  parts.push(
    `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#444"/>`,
  );
  modes.forEach((mode, i) => {
    const ly = plot.top + i * 20;
    parts.push(`<rect x="${plot.right + 20}" y="${ly}" width="12" height="12" fill="${MODE_COLORS[mode]}"/>`);
    parts.push(text(plot.right + 38, ly + 10, mode));
  });
  return { svg: parts.join('\n'), height };
}

function anatomyChart(results: readonly ScenarioResult[], top: number): { svg: string; height: number } {
  const rows = results.filter((r) => r.summary?.segments);
  const rowHeight = 22;
  const parts = [
    text(20, top + 20, 'Latency anatomy per run (mean ms, median of repeats)', 'font-weight="bold"'),
  ];
  if (rows.length === 0) {
    parts.push(text(20, top + 50, 'no run timings were read'));
    return { svg: parts.join('\n'), height: 80 };
  }
  const totals = rows.map((r) => SEGMENT_NAMES.reduce((sum, s) => sum + (r.summary?.segments?.[s] ?? 0), 0));
  const ticks = niceTicks(Math.max(...totals));
  const xMax = ticks[ticks.length - 1] ?? 1;
  const plot = { left: 190, right: WIDTH - 30, top: top + 60 };
  const bottom = plot.top + rows.length * rowHeight;
  const x = (v: number) => plot.left + (v / xMax) * (plot.right - plot.left);
  SEGMENT_NAMES.forEach((segment, i) => {
    const lx = 20 + i * 120;
    parts.push(`<rect x="${lx}" y="${top + 32}" width="12" height="12" fill="${SEGMENT_COLORS[segment]}"/>`);
    parts.push(text(lx + 16, top + 42, SEGMENT_LABELS[segment]));
  });
  for (const tick of ticks) {
    parts.push(`<line x1="${n(x(tick))}" x2="${n(x(tick))}" y1="${plot.top}" y2="${bottom}" stroke="#ddd"/>`);
    parts.push(text(x(tick), bottom + 16, String(tick), 'text-anchor="middle"'));
  }
  rows.forEach((r, i) => {
    const ry = plot.top + i * rowHeight;
    parts.push(text(plot.left - 8, ry + 15, r.scenario.name, 'text-anchor="end"'));
    let offset = 0;
    for (const segment of SEGMENT_NAMES) {
      const value = r.summary?.segments?.[segment] ?? 0;
      if (value <= 0) continue;
      parts.push(
        `<rect x="${n(x(offset))}" y="${ry + 3}" width="${n(x(offset + value) - x(offset))}" height="${rowHeight - 6}" fill="${SEGMENT_COLORS[segment]}"><title>${escapeXml(`${r.scenario.name} ${SEGMENT_LABELS[segment]}: ${value.toFixed(1)} ms`)}</title></rect>`,
      );
      offset += value;
    }
    parts.push(text(x(offset) + 4, ry + 15, `${offset.toFixed(1)} ms`, 'font-size="10"'));
  });
  parts.push(text((plot.left + plot.right) / 2, bottom + 34, 'milliseconds', 'text-anchor="middle"'));
  return { svg: parts.join('\n'), height: bottom + 44 - top };
}

/** The figures the ratio chart draws for each scenario (the full list is in the Markdown). */
const RATIO_FIGURES = ['req/s', 'p50 ms', 'CPU ms/req, all processes'];
const RATIO_COLORS = ['#e4572e', '#4c78a8', '#72b7b2'];

/** `--baseline`: this tree / baseline per scenario for the headline figures, with 1× marked. */
function ratioChart(
  baseline: NonNullable<BenchReport['baseline']>,
  tree: readonly ScenarioResult[],
  top: number,
): { svg: string; height: number } {
  const figures = FIGURES.filter((f) => RATIO_FIGURES.includes(f.name));
  const rows = tree.flatMap((ours) => {
    const theirs = baseline.scenarios.find((r) => r.scenario.name === ours.scenario.name);
    if (theirs === undefined) return [];
    return [{ name: ours.scenario.name, ratios: figures.map((f) => ratio(f.read(theirs), f.read(ours))) }];
  });
  const parts = [
    text(
      20,
      top + 20,
      `This tree / ${baseline.ref} (${baseline.sha.slice(0, 7)}), alternating runs (req/s: higher is better; latency, CPU: lower)`,
      'font-weight="bold"',
    ),
  ];
  const rowHeight = 14 * figures.length + 10;
  const plot = { left: 190, right: WIDTH - 60, top: top + 60 };
  const bottom = plot.top + rows.length * rowHeight;
  const all = rows.flatMap((r) => r.ratios).filter((v): v is number => v !== null);
  const ticks = niceTicks(Math.max(2, ...all), 4);
  const xMax = ticks[ticks.length - 1] ?? 2;
  const x = (v: number) => plot.left + (v / xMax) * (plot.right - plot.left);
  figures.forEach((figure, i) => {
    const lx = 20 + i * 200;
    parts.push(`<rect x="${lx}" y="${top + 32}" width="12" height="12" fill="${RATIO_COLORS[i]}"/>`);
    parts.push(text(lx + 16, top + 42, figure.name));
  });
  for (const tick of ticks) {
    parts.push(`<line x1="${n(x(tick))}" x2="${n(x(tick))}" y1="${plot.top}" y2="${bottom}" stroke="#ddd"/>`);
    parts.push(text(x(tick), bottom + 16, `${tick}×`, 'text-anchor="middle"'));
  }
  parts.push(`<line x1="${n(x(1))}" x2="${n(x(1))}" y1="${plot.top}" y2="${bottom}" stroke="#222"/>`);
  rows.forEach((row, i) => {
    const ry = plot.top + i * rowHeight;
    parts.push(text(plot.left - 8, ry + rowHeight / 2 + 4, row.name, 'text-anchor="end"'));
    row.ratios.forEach((value, fi) => {
      if (value === null) return;
      const by = ry + 5 + fi * 14;
      parts.push(
        `<rect x="${plot.left}" y="${by}" width="${n(x(value) - plot.left)}" height="11" fill="${RATIO_COLORS[fi]}"><title>${escapeXml(`${row.name} ${figures[fi]?.name}: ${value.toFixed(2)}×`)}</title></rect>`,
      );
      parts.push(text(x(value) + 4, by + 10, `${value.toFixed(2)}×`, 'font-size="10"'));
    });
  });
  return { svg: parts.join('\n'), height: bottom + 30 - top };
}

export function renderSvg(report: BenchReport): string {
  const header = text(
    20,
    24,
    `flowbox benchmark ${report.startedAt.slice(0, 10)} on ${report.machine.hostname}: ${report.machine.cpuModel}, ${report.machine.cores} cores`,
    'font-size="14" font-weight="bold"',
  );
  const throughput = throughputChart(report.scenarios, 40);
  const anatomy = anatomyChart(report.scenarios, 40 + throughput.height + 20);
  const ratiosTop = 40 + throughput.height + 20 + anatomy.height + 20;
  const ratios =
    report.baseline === undefined ? null : ratioChart(report.baseline, report.scenarios, ratiosTop);
  const height = ratiosTop + (ratios === null ? -10 : ratios.height + 10);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${n(height)}" viewBox="0 0 ${WIDTH} ${n(height)}" ${FONT}>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    header,
    throughput.svg,
    anatomy.svg,
    ratios?.svg ?? '',
    '</svg>',
    '',
  ].join('\n');
}
