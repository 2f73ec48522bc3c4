/**
 * The apps' event-loop delay, from their own /metrics (prom-client's default metrics, which
 * reset their delay histogram at every scrape): read once before a window to start it afresh,
 * once after to read it. The worst app counts: one saturated app is the fleet's wall.
 */
export interface EventLoopDelay {
  p99Ms: number;
  maxMs: number;
}

const P99 = /^flowbox_app_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m;
const MAX = /^flowbox_app_nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m;

export function parseEventLoopDelay(metrics: string): EventLoopDelay | null {
  const p99 = P99.exec(metrics)?.[1];
  const max = MAX.exec(metrics)?.[1];
  if (p99 === undefined || max === undefined) return null;
  return { p99Ms: Number(p99) * 1000, maxMs: Number(max) * 1000 };
}

/** The worst p99 and max over the apps since their last scrape; null when no app exposes them. */
export async function readEventLoopDelay(
  appUrls: readonly string[],
  signal: AbortSignal,
): Promise<EventLoopDelay | null> {
  const readings = await Promise.all(
    appUrls.map(async (url) => {
      try {
        const response = await fetch(`${url}/metrics`, {
          signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)]),
        });
        return response.ok ? parseEventLoopDelay(await response.text()) : null;
      } catch {
        return null;
      }
    }),
  );
  const found = readings.filter((r): r is EventLoopDelay => r !== null);
  if (found.length === 0) return null;
  return {
    p99Ms: Math.max(...found.map((r) => r.p99Ms)),
    maxMs: Math.max(...found.map((r) => r.maxMs)),
  };
}
