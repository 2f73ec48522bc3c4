import autocannon from 'autocannon';
import { createLoadTally, type LoadResult } from './load-result.ts';

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

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const tally = createLoadTally(options.connections);
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
  instance.on('response', (_client, statusCode, _bytes, responseTime) =>
    tally.answered(statusCode, responseTime),
  );
  const stopProgress = tally.reportProgress(options.onProgress);
  const stop = () => instance.stop();
  options.signal.addEventListener('abort', stop, { once: true });
  try {
    const { errors, timeouts } = await finished;
    return tally.result({ errors, timeouts });
  } finally {
    stopProgress();
    options.signal.removeEventListener('abort', stop);
  }
}
