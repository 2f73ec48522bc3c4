import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { sampleRepeat, sampleReport, sampleScenario } from '../test/sample-report.ts';
import { renderMarkdown } from './report-md.ts';
import { FIGURES, ratio, ratioRows } from './report-ratios.ts';
import { renderSvg } from './report-svg.ts';
import type { BenchReport } from './result-types.ts';
import { resultBaseName } from './results-files.ts';
import { scenario } from './scenarios.ts';
import { mergeRuns } from './suite-runner.ts';

const SHA = '55a97c9aa2c3e1f0b6d7e8f90123456789abcdef';

function withBaseline(): BenchReport {
  const report = sampleReport();
  return {
    ...report,
    baseline: {
      ref: 'main~3',
      sha: SHA,
      tree: { sha: '063f5040000000000000000000000000000000000', dirty: true },
      scenarios: [sampleScenario('warm', 1, 1, 1, 100), sampleScenario('cold', 1, 1, 1, 25)],
    },
  };
}

describe('--baseline reports', () => {
  it('reads each figure from both sides and divides this tree by the baseline', () => {
    expect(ratio(100, 150)).toBe(1.5);
    expect(ratio(0, 3)).toBeNull();
    expect(ratio(null, 3)).toBeNull();
    const report = withBaseline();
    const rows = ratioRows(report.baseline?.scenarios ?? [], report.scenarios);
    const warm = rows.find((r) => r[0] === 'warm-1a1w-c1' && r[1] === 'req/s');
    expect(warm).toEqual(['warm-1a1w-c1', 'req/s', '101.00', '151.00', '1.50×']);
    // Scenarios the baseline did not run have no rows.
    expect(rows.some((r) => r[0] === 'warm-1a2w-c2')).toBe(false);
    expect(new Set(rows.map((r) => r[1]))).toContain('CPU ms/req, all processes');
    expect(FIGURES.every((f) => f.better === 'higher' || f.better === 'lower')).toBe(true);
  });

  it('puts both sides and the ratios in the Markdown, the chart and the file name', () => {
    const report = withBaseline();
    const md = renderMarkdown(report, 'x.svg');
    expect(md).toContain(`## Against the baseline: main~3 (${SHA.slice(0, 7)})`);
    expect(md).toContain('063f504 with uncommitted changes');
    expect(md).toMatch(/\| warm-1a1w-c1 +\| req\/s +\| 101\.00 +\| 151\.00 +\| 1\.50× +\|/);
    const svg = renderSvg(report);
    expect(XMLValidator.validate(svg)).toBe(true);
    expect(svg).toContain('1.50×');
    expect(renderSvg(sampleReport())).not.toContain('This tree /');
    expect(resultBaseName(report)).toBe('2026-01-02-bench-_host_-quick-vs-55a97c9');
  });

  it('merges single-repeat runs of one scenario into one result with renumbered repeats', () => {
    const s = scenario('warm', 1, 1);
    const one = (reqPerSec: number) => ({
      scenario: s,
      status: 'ok' as const,
      warmup: { requests: 10, ok: 10, durationS: 1 },
      idle: null,
      repeats: [sampleRepeat(0, reqPerSec, 0)],
      summary: null,
    });
    const merged = mergeRuns(s, [one(100), one(140), one(120)]);
    expect(merged.repeats.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(merged.summary?.reqPerSec).toMatchObject({ median: 120, min: 100, max: 140 });
    expect(merged.status).toBe('ok');
    const failed = mergeRuns(s, [one(100), { ...one(0), status: 'failed', error: 'boom', repeats: [] }]);
    expect(failed).toMatchObject({ status: 'failed', error: 'boom' });
    expect(failed.repeats).toHaveLength(1);
  });
});
