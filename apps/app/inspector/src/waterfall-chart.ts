import type { StepView, Timings } from './api-types.ts';
import { s } from './dom.ts';
import { ms } from './format.ts';
import { buildWaterfall, niceScale } from './waterfall.ts';

const ROW = 20;
const LABEL = 150;
const WIDTH = 900;
const AXIS = 18;

/**
 * The waterfall as SVG: one row per part of the anatomy and per step, a lane per loop iteration
 * (its steps' bars in one row), on one time scale.
 */
export function waterfallChart(timings: Timings | null, steps: StepView[]): SVGElement {
  const { rows, spanMs } = buildWaterfall(timings, steps);
  const scale = niceScale(spanMs);
  const plot = WIDTH - LABEL - 70;
  const x = (value: number) => LABEL + (value / scale.max) * plot;
  const height = AXIS + rows.length * ROW + 4;
  const svg = s('svg', {
    viewBox: `0 0 ${WIDTH} ${height}`,
    class: 'waterfall',
    role: 'img',
    'data-testid': 'waterfall',
    'aria-label': 'latency waterfall',
  });
  for (let value = 0; value <= scale.max + scale.step / 2; value += scale.step) {
    svg.append(
      s('line', { x1: x(value), x2: x(value), y1: AXIS - 4, y2: height, class: 'grid' }),
      s('text', { x: x(value), y: AXIS - 6, class: 'axis', 'text-anchor': 'middle' }, ms(value)),
    );
  }
  rows.forEach((row, index) => {
    const y = AXIS + index * ROW;
    const left = x(row.startMs);
    const width = Math.max(1, x(row.startMs + row.durationMs) - left);
    const bars = (row.bars ?? [row]).map((bar) => {
      const start = x(bar.startMs);
      const rect = s('rect', {
        x: start,
        y: y + 4,
        width: Math.max(1, x(bar.startMs + bar.durationMs) - start),
        height: ROW - 8,
        rx: 2,
        class: row.bars === undefined ? 'span' : `span ${bar.kind}`,
      });
      if (row.bars !== undefined) rect.append(s('title', {}, `${bar.label}: ${ms(bar.durationMs)}`));
      return rect;
    });
    svg.append(
      s(
        'g',
        { class: `row ${row.kind}`, 'data-row': row.label },
        s('text', { x: 6 + row.depth * 12, y: y + 14, class: 'label' }, row.label),
        ...bars,
        s('text', { x: left + width + 4, y: y + 14, class: 'value' }, ms(row.durationMs)),
      ),
    );
  });
  return svg;
}
