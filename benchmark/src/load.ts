import autocannon from 'autocannon';
import { type LatencySummary, latencySummary } from './stats.ts';

/**
 * One load run with autocannon, in this process: POST {} to the sync webhook on every app URL
 * (connections spread round-robin across them), for a duration or a fixed number of requests.
 * Latencies are taken from every response (autocannon's own histogram has no p95 and rounds to
 * whole milliseconds).
 */
export interface LoadOptions {
  urls: readonly string[];
  connections: number;
  /** Seconds of load; ignored when `amount` is set. */
  durationS?: number;
  /** Exactly this many requests, then stop. */
  amount?: number;
  /** Per-request timeout in seconds. */
  timeoutS: number;
  signal: AbortSignal;
  /** Called about every 250 ms with responses so far and seconds elapsed. */
  onProgress?: (responses: number, elapsedS: number) => void;
}

export interface LoadResult {
  connections: number;
  durationS: number;
  /** Responses received (any status). */
  responses: number;
  ok: number;
  non2xx: number;
  /** Socket errors and timeouts (no response). */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** 2xx responses per second. */
  reqPerSec: number;
  /** Over 2xx responses, milliseconds. */
  latencyMs: LatencySummary | null;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  const started = performance.now();
  let finish: (error: unknown, result: autocannon.Result | undefined) => void = () => {};
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (error, result) => (error || result === undefined ? reject(error) : resolve(result));
  });
  // The callback form returns the instance (events, stop()); the promise form does not.
  const instance = autocannon(
    {
      // autocannon accepts several URLs (its types say one): connections take them in turn.
      url: [...options.urls] as unknown as string,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      connections: options.connections,
      pipelining: 1,
      timeout: options.timeoutS,
      ...(options.amount === undefined ? { duration: options.durationS ?? 10 } : { amount: options.amount }),
    },
    (error, result) => finish(error, result),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    responses++;
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const progress = setInterval(
    () => options.onProgress?.(responses, (performance.now() - started) / 1000),
    250,
  );
  const stop = () => instance.stop();
  options.signal.addEventListener('abort', stop, { once: true });
  try {
    const result = await finished;
    const durationS = (performance.now() - started) / 1000;
    const ok = latencies.length;
    return {
      connections: options.connections,
      durationS,
      responses,
      ok,
      non2xx: responses - ok,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes,
      reqPerSec: durationS > 0 ? ok / durationS : 0,
      latencyMs: latencySummary(latencies),
    };
  } finally {
    clearInterval(progress);
    options.signal.removeEventListener('abort', stop);
  }
}
