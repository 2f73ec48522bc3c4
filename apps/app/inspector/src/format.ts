export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 100) return `${Math.round(value)} ms`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

/** Local time as `2026-11-24 21:22:31.461`: sortable, to the millisecond. */
export function time(iso: string | null): string {
  if (iso === null) return '–';
  const date = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${clock(date)}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/** Local `21:22:31`. */
export function clock(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

export function json(value: unknown): string {
  if (value === undefined) return '(none)';
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}
