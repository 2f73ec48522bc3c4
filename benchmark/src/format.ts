import type { Spread } from './stats.ts';

/** Number formatting shared by the terminal table and the Markdown report. */
export function fmt(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}

/** `median (min–max)`; the median alone when every repeat gave the same value or there was one. */
export function fmtSpread(spread: Spread | null | undefined, digits = 1): string {
  if (spread === null || spread === undefined) return '–';
  const median = fmt(spread.median, digits);
  if (spread.n < 2) return median;
  const min = fmt(spread.min, digits);
  const max = fmt(spread.max, digits);
  return min === max ? median : `${median} (${min}–${max})`;
}

export function fmtMedian(spread: Spread | null | undefined, digits = 1): string {
  return fmt(spread?.median, digits);
}

/** An aligned plain-text table for the terminal. */
export function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A Markdown table; pipes inside cells are escaped. */
export function mdTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align?: string,
): string {
  const escapeCell = (cell: string) => cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const separator = headers.map((_, i) => (i === 0 ? '---' : (align ?? '---:'))).join(' | ');
  return [
    `| ${headers.map(escapeCell).join(' | ')} |`,
    `| ${separator} |`,
    ...rows.map((r) => `| ${r.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}
