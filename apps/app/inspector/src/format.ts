export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 100) return `${Math.round(value)} ms`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export function time(iso: string | null): string {
  if (iso === null) return '–';
  const date = new Date(iso);
  return `${date.toLocaleDateString()} ${date.toLocaleTimeString()}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

export function json(value: unknown): string {
  if (value === undefined) return '(none)';
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}
