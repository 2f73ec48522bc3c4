import { Agent, request } from 'node:http';
import { createLoadTally, type LoadResult } from './load-result.ts';

export interface PacedLoadOptions {
  urls: readonly string[];
  /** Requests per second in all, sent evenly spaced whatever the answers take. */
  rate: number;
  /** At most this many requests in flight (each on its own kept-alive connection). */
  connections: number;
  durationS: number;
  timeoutS: number;
  signal: AbortSignal;
  onProgress?: (responses: number, elapsedS: number) => void;
}

/**
 * Open-loop load: one POST {} to the sync webhook every 1/rate seconds, round-robin over the
 * app URLs, for the duration; then waits for the answers still out. autocannon's rate options
 * send each second's budget in a burst, which queues behind a concurrency-1 worker and measures
 * the burst, not the rate. A request due while `connections` are all busy is counted as an
 * error (the generator is saturated), never delayed, so the arrival rate stays what was asked.
 */
export async function runPacedLoad(options: PacedLoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const tally = createLoadTally(options.connections);
  let errors = 0;
  let timeouts = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();

  const send = (url: string): Promise<void> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      inFlight += 1;
      const done = () => {
        inFlight -= 1;
        resolve();
      };
      const req = request(url, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': '2' },
        timeout: options.timeoutS * 1000,
      });
      req.on('timeout', () => {
        timeouts += 1;
        req.destroy(new Error('timeout'));
      });
      req.on('error', () => {
        errors += 1;
        done();
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          tally.answered(res.statusCode ?? 0, performance.now() - sentAt);
          done();
        });
      });
      req.end('{}');
    });

  const started = performance.now();
  const intervalMs = 1000 / options.rate;
  const total = Math.round(options.durationS * options.rate);
  const stopProgress = tally.reportProgress(options.onProgress);
  try {
    for (let i = 0; i < total && !options.signal.aborted; i += 1) {
      // Due times from the start, so a late timer does not push every later request back.
      const wait = started + i * intervalMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight >= options.connections) {
        errors += 1;
        continue;
      }
      const sent = send(options.urls[i % options.urls.length] ?? '');
      pending.add(sent);
      void sent.then(() => pending.delete(sent));
    }
    await Promise.all(pending);
  } finally {
    stopProgress();
    agent.destroy();
  }
  return tally.result({ errors, timeouts });
}
