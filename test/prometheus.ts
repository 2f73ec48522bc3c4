/** The value of one sample in Prometheus' text format (`series` with its labels), or undefined. */
export function promSample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
