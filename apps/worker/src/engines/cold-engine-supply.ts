import type { Logger } from '@flowbox/node-kit';
import { type PreloadRequest, serializeError } from '@flowbox/protocol';
import type { EngineProcess } from './engine-process.ts';
import type { EngineSupply, StartEngine } from './engine-supply.ts';

export interface ColdEngineSupplyOptions {
  start: StartEngine;
  logger: Logger;
  /** Boot the next engine while idle, so the job does not wait for it. */
  prewarm: boolean;
}

/** An engine booted ahead of time; `ready` is set once its boot finished. */
interface Spare {
  booting: Promise<EngineProcess>;
  ready: EngineProcess | undefined;
}

/**
 * REUSE_SANDBOX=false: every job runs in a process that never ran another job, killed after it.
 * With prewarm, the next process (the spare) boots while the current job runs, then preloads
 * the last job's pieces; a job that comes first waits only for the rest of its boot. A spare
 * has run no job and holds no job's data when it is handed out.
 *
 * A spare boots at a lower priority (SPARE_NICENESS), raised back when a job takes it, so on a
 * saturated machine it takes only the CPU the running job leaves (on 2 busy cores, a cold job's
 * steps took 52 ms beside an equal-priority boot, 19 ms without one).
 */
export function createColdEngineSupply(options: ColdEngineSupplyOptions): EngineSupply {
  const { logger } = options;
  let current: EngineProcess | undefined;
  let spare: Spare | undefined;
  let closed = false;
  let scheduled: NodeJS.Immediate | undefined;
  let preload: PreloadRequest = { pieces: [] };
  let lowPrioritySpares = true;
  // Used engines being killed: release() does not wait for them, close() does.
  const ending = new Set<Promise<void>>();

  const bootSpare = (): void => {
    if (!options.prewarm || closed || spare !== undefined) return;
    const next: Spare = { booting: options.start({ spare: lowPrioritySpares }), ready: undefined };
    spare = next;
    next.booting.then(
      (engine) => {
        next.ready = engine;
        // close() may have run while it booted.
        if (closed) void engine.kill();
        else engine.preload(preload);
      },
      (error: unknown) => {
        logger.warn(
          { err: serializeError(error) },
          'prewarming an engine failed; the next job boots its own',
        );
        if (spare === next) spare = undefined;
      },
    );
  };

  // On the next turn of the event loop: fork() blocks it for a few milliseconds, and the job
  // that was just handed an engine should get its execute message out first.
  const scheduleSpare = (): void => {
    if (!options.prewarm || closed) return;
    clearImmediate(scheduled);
    scheduled = setImmediate(bootSpare);
  };

  const takeSpare = async (): Promise<{ engine: EngineProcess; bootMs: number } | undefined> => {
    const taken = spare;
    spare = undefined;
    if (taken === undefined) return undefined;
    const waitStarted = performance.now();
    // Read before awaiting: the boot may finish during the wait, which is still a wait.
    const wasReady = taken.ready !== undefined;
    const engine = taken.ready ?? (await taken.booting.catch(() => undefined));
    // A spare that died while idle is discarded; the job boots its own.
    if (engine === undefined || !engine.alive || engine.jobsServed > 0) {
      await engine?.kill();
      return undefined;
    }
    if (!engine.restorePriority()) {
      // Without CAP_SYS_NICE a nice value only goes up: stop lowering spares, so only this one
      // job runs at the lower priority.
      lowPrioritySpares = false;
      logger.warn(
        { pid: engine.pid },
        'could not raise a prewarmed engine back to the worker priority; it runs its job at a lower one, and later spares boot at the worker priority',
      );
    }
    return { engine, bootMs: wasReady ? 0 : performance.now() - waitStarted };
  };

  return {
    start() {
      bootSpare();
    },
    async acquire(job) {
      if (job !== undefined) preload = job;
      const prewarmed = await takeSpare();
      const acquired =
        prewarmed === undefined
          ? await options.start().then((engine) => ({ engine, bootMs: engine.bootMs, preBooted: false }))
          : { ...prewarmed, preBooted: true };
      current = acquired.engine;
      scheduleSpare();
      return acquired;
    },
    async release(engine) {
      if (current === engine) current = undefined;
      // Once its log upload ended (the engine goes on with it after the result), kill() sends
      // SIGKILL: the engine can run nothing more. Waiting for the upload, or for the engine to
      // exit and be reaped (~5-10 ms), is not the job's business, nor the next one's.
      const ended = engine.drain().then(() => engine.kill());
      ending.add(ended);
      void ended.finally(() => ending.delete(ended));
      // In case the spare booted during the job failed or died: boot another while idle.
      scheduleSpare();
    },
    get currentPid() {
      return current?.alive ? current.pid : undefined;
    },
    async close() {
      closed = true;
      clearImmediate(scheduled);
      const held = current;
      const booting = spare?.booting.catch(() => undefined);
      current = undefined;
      spare = undefined;
      await Promise.all([
        held?.drain().then(() => held.kill()),
        booting?.then((engine) => engine?.kill()),
        ...ending,
      ]);
    },
  };
}
