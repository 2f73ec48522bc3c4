/** One read of the inspector's, timed: its median and worst over the repeats, in ms. */
export interface ReadTiming {
  name: string;
  path: string;
  medianMs: number;
  maxMs: number;
}

/** The inspector's reads: the runs list as it opens, filtered by flow and by status, and the stats. */
export function inspectorReads(flowId: string): { name: string; path: string }[] {
  return [
    { name: 'list, newest 50', path: '/v1/runs?limit=50' },
    { name: 'list of a flow, newest 50', path: `/v1/runs?flowId=${flowId}&limit=50` },
    { name: 'list of FAILED, newest 50', path: '/v1/runs?status=FAILED&limit=50' },
    { name: 'stats, 5 minutes', path: '/v1/runs/stats?windowSeconds=300' },
    { name: 'stats, 24 hours', path: '/v1/runs/stats?windowSeconds=86400&bucketSeconds=3600' },
  ];
}

/** Makes each read `times` times in turn through `appUrl`; a non-2xx answer throws. */
export async function timeReads(
  appUrl: string,
  apiKey: string,
  reads: readonly { name: string; path: string }[],
  times: number,
): Promise<ReadTiming[]> {
  const timings: ReadTiming[] = [];
  for (const read of reads) {
    const ms: number[] = [];
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      const response = await fetch(`${appUrl}${read.path}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      const body = await response.text();
      ms.push(performance.now() - started);
      if (!response.ok)
        throw new Error(`GET ${read.path} answered ${response.status}: ${body.slice(0, 200)}`);
    }
    ms.sort((a, b) => a - b);
    timings.push({
      ...read,
      medianMs: ms[Math.floor(ms.length / 2)] ?? 0,
      maxMs: ms.at(-1) ?? 0,
    });
  }
  return timings;
}
