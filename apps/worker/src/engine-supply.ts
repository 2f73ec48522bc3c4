import type { EngineProcess } from './engine-process.ts';

/**
 * Where a job gets its engine. Warm (this file): one engine kept between jobs and replaced
 * only after it died or was killed. A cold supply (a fresh engine per job, booted ahead of
 * time while idle) implements the same interface.
 */
export interface EngineSupply {
  /** An engine ready for a job; `bootMs` is 0 when it was already running. */
  acquire(): Promise<{ engine: EngineProcess; bootMs: number }>;
  /** Hands the engine back after a job; `reusable` is false after a timeout or crash. */
  release(engine: EngineProcess, outcome: { reusable: boolean }): Promise<void>;
  /** The engine held right now, if any (for logs and tests). */
  readonly currentPid: number | undefined;
  close(): Promise<void>;
}

export function createWarmEngineSupply(start: () => Promise<EngineProcess>): EngineSupply {
  let current: EngineProcess | undefined;
  return {
    async acquire() {
      if (current?.alive) return { engine: current, bootMs: 0 };
      current = await start();
      return { engine: current, bootMs: current.bootMs };
    },
    async release(engine, outcome) {
      if (outcome.reusable && engine.alive) return;
      if (current === engine) current = undefined;
      await engine.kill();
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
