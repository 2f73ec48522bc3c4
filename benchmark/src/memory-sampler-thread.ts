/**
 * The memory sampler's thread (see startMemorySampler in proc-stats.ts): posts `ready` after its
 * first sample, samples until the parent posts 'stop', then takes a last sample and posts the
 * peaks back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type KindRoots, MemoryPeakTracker } from './proc-stats.ts';

function main(): void {
  const { roots, intervalMs, procDir } = workerData as {
    roots: KindRoots;
    intervalMs: number;
    procDir: string;
  };
  const tracker = new MemoryPeakTracker(roots, procDir);
  const timer = setInterval(() => tracker.sample(), intervalMs);
  tracker.sample();
  parentPort?.postMessage({ type: 'ready' });
  parentPort?.once('message', () => {
    clearInterval(timer);
    // Processes alive at the end are always counted.
    tracker.sample();
    parentPort?.postMessage({ type: 'peaks', peaks: tracker.peaks() });
    parentPort?.close();
  });
}

main();
