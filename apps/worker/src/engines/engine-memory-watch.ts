import { readTreeRssBytes } from './process-rss.ts';

/**
 * How often a running job's engine is measured. A run can allocate at a few GB a second, so the
 * bound holds to the limit plus what it allocates in one interval, and the run ends well within
 * a second of crossing it.
 */
export const ENGINE_MEMORY_SAMPLE_MS = 100;

export interface EngineMemoryWatchOptions {
  pid: number;
  limitBytes: number;
  /** Called once, with the resident memory that crossed the limit; the watch has stopped. */
  onExceeded(rssBytes: number): void;
  /** The engine's and its descendants' resident memory; /proc by default, tests pass their own. */
  readRss?: ((pid: number) => number | undefined) | undefined;
  intervalMs?: number;
}

/**
 * ENGINE_MEMORY_LIMIT_MB: measures an engine (with its sandbox's processes) while it runs a job.
 * The one bound that holds in every execution mode and for every allocation, the V8 heap's and
 * what lives outside it (ArrayBuffers in node:vm, native memory of a piece): isolated-vm's limit
 * covers only a code step's isolate, and UNSANDBOXED code steps have none of their own.
 * Returns the function that stops it.
 */
export function watchEngineMemory(options: EngineMemoryWatchOptions): () => void {
  const readRss = options.readRss ?? readTreeRssBytes;
  const timer = setInterval(() => {
    const rssBytes = readRss(options.pid);
    if (rssBytes === undefined || rssBytes <= options.limitBytes) return;
    clearInterval(timer);
    options.onExceeded(rssBytes);
  }, options.intervalMs ?? ENGINE_MEMORY_SAMPLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
