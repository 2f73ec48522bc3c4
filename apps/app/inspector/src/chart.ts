import type { RunStats } from './api-types.ts';
import { h, s } from './dom.ts';
import { clock, ms } from './format.ts';
import { niceScale } from './waterfall.ts';

const WIDTH = 560;
const HEIGHT = 140;
const LEFT = 48;
const BOTTOM = 18;
const TOP = 8;

/**
 * Two small SVG charts over the stats window: runs per second by outcome (stacked bars) and
 * the p50, p95 and p99 of totalMs (lines), with the window's totals beside them.
 */
export function statsChart(stats: RunStats): HTMLElement {
  const perSecond = (count: number) => count / stats.bucketSeconds;
  const seconds = stats.windowSeconds;
  const finished = stats.total.succeeded + stats.total.failed;
  return h(
    'section',
    { class: 'chart', 'data-testid': 'stats-chart' },
    h(
      'div',
      { class: 'chart-panel' },
      h('h3', {}, 'Throughput ', h('span', { class: 'muted' }, `(runs/s, ${bucketLabel(stats)})`)),
      throughputChart(stats, perSecond),
      h(
        'p',
        { class: 'legend' },
        h('span', { class: 'key succeeded' }, 'succeeded'),
        h('span', { class: 'key failed' }, 'failed'),
        h('span', { class: 'key in-flight' }, 'in flight'),
        ` · ${(finished / seconds).toFixed(1)}/s over ${seconds / 60} min`,
      ),
    ),
    h(
      'div',
      { class: 'chart-panel' },
      h('h3', {}, 'Latency ', h('span', { class: 'muted' }, '(accepted → result, ms)')),
      latencyChart(stats),
      h(
        'p',
        { class: 'legend' },
        h('span', { class: 'key p50' }, `p50 ${ms(stats.total.p50Ms)}`),
        h('span', { class: 'key p95' }, `p95 ${ms(stats.total.p95Ms)}`),
        h('span', { class: 'key p99' }, `p99 ${ms(stats.total.p99Ms)}`),
      ),
    ),
  );
}

function bucketLabel(stats: RunStats): string {
  return `${stats.bucketSeconds} s buckets`;
}

function frame(
  maxValue: number,
  format: (value: number) => string,
): { svg: SVGElement; y: (v: number) => number } {
  const scale = niceScale(maxValue);
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const y = (value: number) => TOP + plotHeight - (value / scale.max) * plotHeight;
  const svg = s('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'plot', role: 'img' });
  for (let value = 0; value <= scale.max + scale.step / 2; value += scale.step) {
    svg.append(
      s('line', { x1: LEFT, x2: WIDTH, y1: y(value), y2: y(value), class: 'grid' }),
      s('text', { x: LEFT - 6, y: y(value) + 4, class: 'axis', 'text-anchor': 'end' }, format(value)),
    );
  }
  return { svg, y };
}

function timeAxis(svg: SVGElement, stats: RunStats, x: (index: number) => number): void {
  const count = stats.buckets.length;
  const marks: Array<[number, string]> = [
    [0, 'start'],
    [Math.floor(count / 2), 'middle'],
    [count - 1, 'end'],
  ];
  for (const [index, anchor] of marks) {
    const bucket = stats.buckets[index];
    if (bucket === undefined) continue;
    const label = clock(new Date(bucket.start));
    svg.append(s('text', { x: x(index), y: HEIGHT - 4, class: 'axis', 'text-anchor': anchor }, label));
  }
}

function throughputChart(stats: RunStats, perSecond: (count: number) => number): SVGElement {
  const max = Math.max(0, ...stats.buckets.map((b) => perSecond(b.succeeded + b.failed + b.inFlight)));
  const { svg, y } = frame(max, (v) => (v >= 10 ? v.toFixed(0) : v.toFixed(1)));
  const slot = (WIDTH - LEFT) / Math.max(1, stats.buckets.length);
  const x = (index: number) => LEFT + index * slot + slot / 2;
  stats.buckets.forEach((bucket, index) => {
    let base = 0;
    for (const [count, kind] of [
      [bucket.succeeded, 'succeeded'],
      [bucket.failed, 'failed'],
      [bucket.inFlight, 'in-flight'],
    ] as const) {
      if (count === 0) continue;
      const top = y(perSecond(base + count));
      svg.append(
        s('rect', {
          x: LEFT + index * slot + 0.5,
          width: Math.max(1, slot - 1),
          y: top,
          height: y(perSecond(base)) - top,
          class: `bar ${kind}`,
        }),
      );
      base += count;
    }
  });
  timeAxis(svg, stats, x);
  return svg;
}

function latencyChart(stats: RunStats): SVGElement {
  const values = stats.buckets.flatMap((b) => [b.p50Ms, b.p95Ms, b.p99Ms]).filter((v) => v !== null);
  const { svg, y } = frame(Math.max(0, ...values), (v) => ms(v));
  const slot = (WIDTH - LEFT) / Math.max(1, stats.buckets.length);
  const x = (index: number) => LEFT + index * slot + slot / 2;
  for (const key of ['p50Ms', 'p95Ms', 'p99Ms'] as const) {
    // A bucket without finished runs breaks the line rather than drawing it down to zero.
    let path = '';
    let pen = 'M';
    stats.buckets.forEach((bucket, index) => {
      const value = bucket[key];
      if (value === null) {
        pen = 'M';
        return;
      }
      path += `${pen}${x(index).toFixed(1)},${y(value).toFixed(1)} `;
      pen = 'L';
    });
    if (path !== '') svg.append(s('path', { d: path, class: `line ${key.replace('Ms', '')}` }));
    stats.buckets.forEach((bucket, index) => {
      const value = bucket[key];
      if (value !== null)
        svg.append(
          s('circle', { cx: x(index), cy: y(value), r: 1.5, class: `dot ${key.replace('Ms', '')}` }),
        );
    });
  }
  timeAxis(svg, stats, x);
  return svg;
}
