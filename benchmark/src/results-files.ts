import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderMarkdown } from './report-md.ts';
import { renderSvg } from './report-svg.ts';
import type { BenchReport } from './result-types.ts';

/**
 * `<YYYY-MM-DD>-<host>.{json,md,svg}` for the standard suite; other suites add a suffix
 * (`-quick`, `-custom`, `-target`) so a quick run never overwrites a committed full result, and a
 * run against a baseline adds `-vs-<sha>`.
 */
export function resultBaseName(
  report: Pick<BenchReport, 'startedAt' | 'suite' | 'machine' | 'baseline'>,
): string {
  const host = report.machine.hostname.replaceAll(/[^A-Za-z0-9.-]/g, '_') || 'host';
  const suffix = report.suite === 'standard' ? '' : `-${report.suite}`;
  const versus = report.baseline === undefined ? '' : `-vs-${report.baseline.sha.slice(0, 7)}`;
  return `${report.startedAt.slice(0, 10)}-${host}${suffix}${versus}`;
}

export async function writeResults(
  report: BenchReport,
  outDir: string,
): Promise<{ json: string; md: string; svg: string }> {
  await mkdir(outDir, { recursive: true });
  const base = resultBaseName(report);
  const files = {
    json: join(outDir, `${base}.json`),
    md: join(outDir, `${base}.md`),
    svg: join(outDir, `${base}.svg`),
  };
  await Promise.all([
    writeFile(files.json, `${JSON.stringify(report, null, 2)}\n`),
    writeFile(files.md, renderMarkdown(report, `${base}.svg`)),
    writeFile(files.svg, renderSvg(report)),
  ]);
  return files;
}
