import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { sampleRepeat, sampleReport } from '../test/sample-report.ts';
import { summarizeScenario } from './aggregate.ts';
import { cpuBudget, cpuBudgetSection } from './cpu-budget.ts';
import { fmt, fmtSpread, mdTable, textTable } from './format.ts';
import { renderBar, renderProgressLine } from './progress.ts';
import { compareWithReference, fmtAdvantage } from './reference.ts';
import { renderMarkdown } from './report-md.ts';
import { escapeXml, niceTicks, renderSvg } from './report-svg.ts';
import { resultBaseName } from './results-files.ts';
import { scenario } from './scenarios.ts';

describe('summarizeScenario', () => {
  it('takes medians and spreads over repeats, per worker too', () => {
    const s = scenario('warm', 1, 2);
    const summary = summarizeScenario(s, [
      sampleRepeat(0, 100, 0),
      sampleRepeat(1, 140, 0),
      sampleRepeat(2, 120, 0),
    ]);
    expect(summary?.reqPerSec).toMatchObject({ median: 120, min: 100, max: 140, n: 3 });
    expect(summary?.reqPerSecPerWorker?.median).toBe(60);
    expect(summary?.totals.ok).toBe(60);
    expect(summary?.redisCommandsPerRequest?.median).toBe(52);
    expect(summary?.processes.engine?.peakRssMb).toBe(60);
    expect(summary?.segments?.logPersist).toBeCloseTo(1.5);
    expect(summarizeScenario(s, [])).toBeNull();
  });
});

describe('compareWithReference', () => {
  it('compares warm per-worker throughput as a range and latencies as ratios, matched scenarios only', () => {
    const rows = compareWithReference(sampleReport().scenarios);
    const perWorker = rows.find((r) => r.figure === 'warm req/s per worker' && r.scenario === 'warm-1a1w-c1');
    expect(perWorker?.flowbox).toBe(151);
    expect(perWorker?.advantage?.low).toBeCloseTo(151 / 5.1);
    expect(perWorker?.advantage?.high).toBeCloseTo(151 / 4.3);
    expect(rows.some((r) => r.scenario === 'warm-1a2w-c8')).toBe(false);
    const boot = rows.find((r) => r.figure.startsWith('cold engine boot') && r.scenario === 'cold-1a1w-c1');
    expect(boot?.advantage?.low).toBeCloseTo(1167 / 30);
    const prewarmBoot = rows.find(
      (r) => r.figure.startsWith('cold engine boot') && r.scenario === 'cold-prewarm-1a1w-c1',
    );
    expect(prewarmBoot?.advantage).toBeNull();
    expect(fmtAdvantage(prewarmBoot?.advantage ?? null)).toMatch(/n\/a/);
    expect(fmtAdvantage({ low: 29.6, high: 35.1 })).toBe('30–35×');
  });
});

describe('compareWithReference for a deployment', () => {
  it('tells warm from cold by the share of fresh engines', () => {
    const report = sampleReport();
    const asTarget = report.scenarios.slice(0, 1).map((r) => ({
      ...r,
      scenario: { ...r.scenario, mode: 'target' as const, name: 'target-1a1w-c1' },
    }));
    expect(compareWithReference(asTarget).map((row) => row.figure)).toEqual([
      'warm req/s per worker',
      'warm worker-busy per job (mean)',
    ]);
    const cold = report.scenarios.slice(4, 5).map((r) => ({
      ...r,
      scenario: { ...r.scenario, mode: 'target' as const, name: 'target-1a1w-c1' },
    }));
    expect(compareWithReference(cold).map((row) => row.figure)).toEqual([
      'cold engine boot on the request path (mean)',
      'cold end-to-end latency (client, mean)',
    ]);
  });
});

describe('renderMarkdown', () => {
  const md = renderMarkdown(sampleReport(), 'chart.svg');

  it('holds the setup, every table and the chart', () => {
    expect(md).toContain('# flowbox benchmark: 2026-01-02 on bench-<host>');
    expect(md).toContain('Test CPU @ 3.0GHz, 2 cores');
    expect(md).toContain('Node v24.0.0; autocannon 9.0.0');
    expect(md).toContain('`pnpm bench --quick`');
    for (const heading of [
      '## Summary',
      '## Cost per request',
      '## Latency anatomy',
      '## CPU and memory per process kind',
      '## Against the reference system',
      '## Where the round trips go: warm-1a1w-c1',
      '## Warnings and errors while measuring',
      '## Scenarios that did not finish',
    ]) {
      expect(md).toContain(heading);
    }
    expect(md).toContain('![throughput and latency anatomy](chart.svg)');
    expect(md).toMatch(/hardware, the network and the fleet size differ/);
  });

  it('writes medians with their spread and escapes pipes in cells', () => {
    expect(md).toContain('| warm-1a1w-c1 | 151.0 (150.0–152.0) |');
    expect(md).toContain('x <> $3 \\| y');
    expect(md).toContain('- `cold-1a2w-c2` (failed): app-0 exited');
  });

  it('keeps every table row as wide as its header', () => {
    const tables = md.split('\n\n').filter((block) => block.startsWith('| '));
    expect(tables.length).toBeGreaterThan(5);
    for (const table of tables) {
      const widths = table.split('\n').map((line) => line.replaceAll('\\|', '').split('|').length);
      expect(new Set(widths).size).toBe(1);
    }
  });
});

describe('renderSvg', () => {
  it('is well-formed XML with both charts', () => {
    const svg = renderSvg(sampleReport());
    expect(XMLValidator.validate(svg)).toBe(true);
    expect(svg).toContain('Throughput by worker count');
    expect(svg).toContain('Latency anatomy per run');
    expect(svg).toContain('bench-&lt;host&gt;');
    expect((svg.match(/<rect /g) ?? []).length).toBeGreaterThan(10);
  });

  it('is well-formed without any measured scenario', () => {
    const report = { ...sampleReport(), scenarios: [] };
    const svg = renderSvg(report);
    expect(XMLValidator.validate(svg)).toBe(true);
    expect(svg).toContain('no scenario of this shape');
  });

  it('escapes text and picks round ticks', () => {
    expect(escapeXml('a<b & "c"')).toBe('a&lt;b &amp; &quot;c&quot;');
    expect(niceTicks(151)).toEqual([0, 50, 100, 150, 200]);
    expect(niceTicks(9)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });
});

describe('formatting', () => {
  it('formats numbers and spreads', () => {
    expect(fmt(null)).toBe('–');
    expect(fmt(1234.5)).toBe('1,235');
    expect(fmt(12.3456, 2)).toBe('12.35');
    expect(fmtSpread({ median: 5, min: 4, max: 6, q1: 4.5, q3: 5.5, n: 3 })).toBe('5.0 (4.0–6.0)');
    expect(fmtSpread({ median: 5, min: 5, max: 5, q1: 5, q3: 5, n: 3 })).toBe('5.0');
  });

  it('aligns text tables and builds Markdown tables', () => {
    expect(textTable(['a', 'bb'], [['long', '1']])).toBe('a     bb\n----  --\nlong   1');
    expect(mdTable(['x', 'y'], [['1', '2']])).toBe('| x | y |\n| --- | ---: |\n| 1 | 2 |');
  });

  it('names result files by date, host and suite', () => {
    const report = sampleReport();
    expect(resultBaseName(report)).toBe('2026-01-02-bench-_host_-quick');
    expect(resultBaseName({ ...report, suite: 'standard' })).toBe('2026-01-02-bench-_host_');
  });

  it('renders a progress line that fits the terminal', () => {
    expect(renderBar(0.5, 10)).toBe('[#####.....]');
    const line = renderProgressLine(
      {
        scenarioIndex: 2,
        scenarioCount: 4,
        scenario: 'warm-1a2w-c2',
        phase: 'repeat 1/3',
        fraction: 0.25,
        detail: '1.0/4 s',
        elapsedS: 75,
      },
      200,
    );
    expect(line).toBe('[2/4] warm-1a2w-c2  repeat 1/3  [######..................]  1.0/4 s  1:15');
    expect(
      renderProgressLine(
        {
          scenarioIndex: 1,
          scenarioCount: 1,
          scenario: 'x'.repeat(100),
          phase: 'p',
          fraction: null,
          detail: '',
          elapsedS: 0,
        },
        40,
      ).length,
    ).toBeLessThanOrEqual(39);
  });
});

describe('cpuBudget', () => {
  it('sets each kind against its budget and marks the kinds over it', () => {
    const warm = sampleReport().scenarios.find((r) => r.scenario.mode === 'warm');
    expect(warm).toBeDefined();
    const cells = cpuBudget(warm as NonNullable<typeof warm>);
    expect(cells.find((c) => c.kind === 'app')).toEqual({
      kind: 'app',
      measuredMs: 25,
      budgetMs: 1.5,
      over: true,
    });
    expect(cells.find((c) => c.kind === 'redis')).toEqual({
      kind: 'redis',
      measuredMs: null,
      budgetMs: 0.4,
      over: false,
    });
    // app 25 + worker 10 + engine 15 + postgres 5
    expect(cells.find((c) => c.kind === 'all')).toEqual({
      kind: 'all',
      measuredMs: 55,
      budgetMs: 6.5,
      over: true,
    });
    const section = cpuBudgetSection(sampleReport().scenarios).join('\n');
    expect(section).toContain('## CPU budget per warm request');
    expect(section).toContain('**over** 25.00 / 1.5');
  });
});
