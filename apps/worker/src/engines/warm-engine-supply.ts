import type { Logger } from '@flowbox/node-kit';
import { type PreloadRequest, serializeError } from '@flowbox/protocol';
import type { EngineProcess } from './engine-process.ts';
import type { EngineSupply, StartEngine } from './engine-supply.ts';
import { createEngineRssReader } from './process-rss.ts';

export interface WarmEngineSupplyOptions {
  start: StartEngine;
  logger: Logger;
  /** Recycle an engine once it has served this many jobs. */
  maxJobs: number;
  /** Recycle an engine whose RSS is above this after a job. */
  maxRssBytes: number;
  /** Defaults to /proc/<pid>/status; tests pass their own. */
  readRss?: ((pid: number) => Promise<number | undefined>) | undefined;
}

/**
 * REUSE_SANDBOX=true: one engine is kept between jobs. It is recycled after `maxJobs` jobs
 * (isolated-vm and module state grow slowly), when its RSS passes `maxRssBytes` after a job,
 * and always after a crash or a timeout. Its replacement boots at once, while the worker is
 * idle, and preloads the last job's pieces (for an `isolate` job: their snapshot and the first
 * run's context), so the next job pays for neither. The replacement has run no job.
 */
export function createWarmEngineSupply(options: WarmEngineSupplyOptions): EngineSupply {
  const { logger } = options;
  const readRss = options.readRss ?? createEngineRssReader();
  let current: EngineProcess | undefined;
  /** The engine that replaces a recycled one, booted (and preloaded) while the worker is idle. */
  let next: { booting: Promise<EngineProcess | undefined>; ready: boolean } | undefined;
  /** The last job's pieces and limits: what the replacement preloads. */
  let lastJob: PreloadRequest | undefined;
  let closed = false;
  /** Recycled engines finishing their log upload before they are killed; close() waits for them. */
  const ending = new Set<Promise<void>>();

  const bootNext = (): void => {
    if (closed || next !== undefined) return;
    const preload = lastJob;
    const booting = options.start().then(
      (engine) => {
        // close() may have run while it booted.
        if (closed) {
          void engine.kill();
          return undefined;
        }
        booted.ready = true;
        if (preload !== undefined) engine.preload(preload);
        return engine;
      },
      (error: unknown) => {
        logger.warn(
          { err: serializeError(error) },
          'booting the next engine failed; the next job boots its own',
        );
        return undefined;
      },
    );
    const booted = { booting, ready: false };
    next = booted;
  };

  const recycle = async (engine: EngineProcess, reason: string, data: object = {}): Promise<void> => {
    if (current === engine) current = undefined;
    logger.info(
      { enginePid: engine.pid, jobsServed: engine.jobsServed, reason, ...data },
      'recycling engine',
    );
    // A log upload that follows the last result ends first; the next job need not wait for it.
    const ended = engine.drain().then(() => engine.kill());
    ending.add(ended);
    void ended.finally(() => ending.delete(ended));
    bootNext();
  };

  /** The replacement booted ahead, if it is still fit for a job, and how long the job waited for it. */
  const takeNext = async (): Promise<{ engine: EngineProcess; bootMs: number } | undefined> => {
    const taken = next;
    next = undefined;
    if (taken === undefined) return undefined;
    const waitStarted = performance.now();
    // Read before awaiting: the boot may finish during the wait, which is still a wait.
    const wasReady = taken.ready;
    const engine = await taken.booting;
    if (engine === undefined || !engine.alive || engine.jobsServed > 0) {
      await engine?.kill();
      return undefined;
    }
    return { engine, bootMs: wasReady ? 0 : performance.now() - waitStarted };
  };

  return {
    start() {},
    async acquire(job) {
      if (job !== undefined) lastJob = job;
      if (current?.alive) return { engine: current, bootMs: 0, preBooted: true };
      const booted = await takeNext();
      if (booted !== undefined) {
        current = booted.engine;
        return { ...booted, preBooted: true };
      }
      current = await options.start();
      return { engine: current, bootMs: current.bootMs, preBooted: false };
    },
    async release(engine, outcome) {
      if (!outcome.reusable || !engine.alive) return recycle(engine, 'crashed or timed out');
      if (engine.jobsServed >= options.maxJobs)
        return recycle(engine, 'job limit', { maxJobs: options.maxJobs });
      const rssBytes = await readRss(engine.pid);
      if (rssBytes !== undefined && rssBytes > options.maxRssBytes) {
        return recycle(engine, 'memory limit', { rssBytes, maxRssBytes: options.maxRssBytes });
      }
    },
    get currentPid() {
      return current?.alive ? current.pid : undefined;
    },
    async close() {
      closed = true;
      const engine = current;
      const booting = next?.booting;
      current = undefined;
      next = undefined;
      await Promise.all([
        engine?.drain().then(() => engine.kill()),
        booting?.then((spare) => spare?.kill()),
        ...ending,
      ]);
    },
  };
}
