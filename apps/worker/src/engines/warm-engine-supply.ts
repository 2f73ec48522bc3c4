import type { Logger } from '@flowbox/node-kit';
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
 * and always after a crash or a timeout.
 */
export function createWarmEngineSupply(options: WarmEngineSupplyOptions): EngineSupply {
  const { logger } = options;
  const readRss = options.readRss ?? createEngineRssReader();
  let current: EngineProcess | undefined;

  const recycle = async (engine: EngineProcess, reason: string, data: object = {}): Promise<void> => {
    if (current === engine) current = undefined;
    logger.info(
      { enginePid: engine.pid, jobsServed: engine.jobsServed, reason, ...data },
      'recycling engine',
    );
    await engine.kill();
  };

  return {
    start() {},
    async acquire() {
      if (current?.alive) return { engine: current, bootMs: 0, preBooted: true };
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
      const engine = current;
      current = undefined;
      await engine?.kill();
    },
  };
}
