import { type LatencySummary, latencySummary } from './stats.ts';

/** What one load run measured, however its requests were sent (load.ts, paced-load.ts). */
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

export interface LoadTally {
  /** One response; its latency counts when its status is 2xx. */
  answered(statusCode: number, latencyMs: number): void;
  /** Calls `onProgress` about every 250 ms with responses so far and seconds elapsed; returns its stop. */
  reportProgress(onProgress: ((responses: number, elapsedS: number) => void) | undefined): () => void;
  /** The result, with the time since the tally was made as its duration. */
  result(failures: { errors: number; timeouts: number }): LoadResult;
}

/** Counts a load run's responses from now on. */
export function createLoadTally(connections: number): LoadTally {
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  return {
    answered(statusCode, latencyMs) {
      responses += 1;
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(latencyMs);
    },
    reportProgress(onProgress) {
      const timer = setInterval(() => onProgress?.(responses, elapsedS()), 250);
      return () => clearInterval(timer);
    },
    result({ errors, timeouts }) {
      const durationS = elapsedS();
      const ok = latencies.length;
      return {
        connections,
        durationS,
        responses,
        ok,
        non2xx: responses - ok,
        errors,
        timeouts,
        statusCodes,
        reqPerSec: durationS > 0 ? ok / durationS : 0,
        latencyMs: latencySummary(latencies),
      };
    },
  };
}
