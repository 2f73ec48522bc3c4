import { type Deferred, defer } from '@flowbox/node-kit';
import type { PreloadRequest } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../test-helpers.ts';
import { createColdEngineSupply } from './cold-engine-supply.ts';
import type { EngineProcess } from './engine-process.ts';

/** An engine that boots when the test says so; the real process is covered in test/. */
class FakeEngine implements EngineProcess {
  readonly bootMs = 25;
  alive = true;
  jobsServed = 0;
  readonly pid: number;
  constructor(pid: number) {
    this.pid = pid;
  }
  /** What the supply asked this engine to preload, in order. */
  readonly preloads: string[][] = [];
  /** The isolate sizes and app URLs it was asked to prime with, in order. */
  readonly primes: Array<{ codeStepMemoryMb?: number | undefined; appUrl?: string | undefined }> = [];
  execute(): never {
    throw new Error('not used');
  }
  poll(): never {
    throw new Error('not used');
  }
  /** How often the supply put this engine back at the worker's priority. */
  restored = 0;
  /** False: the kernel refuses to raise it (no CAP_SYS_NICE). */
  canRestore = true;
  restorePriority(): boolean {
    this.restored += 1;
    return this.canRestore;
  }
  preload(preload: PreloadRequest): void {
    this.preloads.push(preload.pieces.map((p) => p.name));
    this.primes.push({ codeStepMemoryMb: preload.codeStepMemoryMb, appUrl: preload.appUrl });
  }
  async kill(): Promise<void> {
    this.alive = false;
  }
  /** A log upload that goes on after the job's result: drain() waits for it. */
  upload: Deferred<void> | undefined;
  drain(): Promise<void> {
    return this.upload?.promise ?? Promise.resolve();
  }
}

/** Boot n resolves when the test finishes it, whether or not the supply has asked for it yet. */
function fakeStarts() {
  const boots: Deferred<FakeEngine>[] = [];
  const boot = (n: number): Deferred<FakeEngine> => {
    while (boots.length <= n) boots.push(defer());
    return boots[n] as Deferred<FakeEngine>;
  };
  const starts = {
    /** How many boots the supply has asked for. */
    count: 0,
    /** Which of them were spares (booted at a lower priority). */
    spares: [] as boolean[],
    start: (options?: { spare?: boolean }) => {
      starts.count += 1;
      starts.spares.push(options?.spare === true);
      return boot(starts.count - 1).promise;
    },
    finish(n: number): FakeEngine {
      const engine = new FakeEngine(1000 + n);
      boot(n).resolve(engine);
      return engine;
    },
    fail(n: number, error: Error): void {
      boot(n).reject(error);
    },
  };
  return starts;
}

describe('cold engine supply', () => {
  it('without prewarm, boots one engine per acquire and kills it on release', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: false });
    supply.start();
    expect(starts.count).toBe(0);
    const acquiring = supply.acquire();
    const engine = starts.finish(0);
    expect(await acquiring).toEqual({ engine, bootMs: 25, preBooted: false });
    await supply.release(engine, { reusable: true });
    expect(engine.alive).toBe(false);
    expect(starts.count).toBe(1);
  });

  it('kills a released engine only once its log upload ended, without holding the release or the next acquire', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: false });
    const acquiring = supply.acquire();
    const engine = starts.finish(0);
    await acquiring;
    engine.upload = defer();
    await supply.release(engine, { reusable: true });
    const next = supply.acquire();
    const second = starts.finish(1);
    expect((await next).engine).toBe(second);
    expect(engine.alive).toBe(true);
    engine.upload.resolve();
    await supply.close();
    expect(engine.alive).toBe(false);
  });

  it('with prewarm, boots at start and while each job runs, and hands out ready spares with bootMs 0', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    expect(starts.count).toBe(1);
    const first = starts.finish(0);
    await Promise.resolve();

    const pieces = ['webhook', 'math-helper'].map((name) => ({
      name,
      version: '1.0.0',
      dir: `/cache/${name}`,
    }));
    const acquired = await supply.acquire({ pieces, codeStepMemoryMb: 64, appUrl: 'http://app:3000' });
    expect(acquired).toEqual({ engine: first, bootMs: 0, preBooted: true });
    // Booted before any job, the first spare had nothing to preload.
    expect(first.preloads).toEqual([[]]);
    // The next boot starts one event-loop turn later (the job's execute goes out first), while the
    // job still runs: at back-to-back load it is ready when the next job comes.
    expect(starts.count).toBe(1);
    await new Promise(setImmediate);
    expect(starts.count).toBe(2);
    first.jobsServed = 1;
    await supply.release(first, { reusable: true });
    expect(first.alive).toBe(false);
    // A spare is already booting: release starts no second one.
    await new Promise(setImmediate);
    expect(starts.count).toBe(2);

    // A job that arrives mid-boot waits for the rest of it, and still counts as prebooted.
    const acquiring = supply.acquire();
    const second = starts.finish(1);
    expect(await acquiring).toMatchObject({ engine: second, preBooted: true });
    expect(second).not.toBe(first);
    // The spare booted during the first job preloaded that job's pieces.
    expect(second.preloads).toEqual([['webhook', 'math-helper']]);
    // ...and was asked to make that job's isolate and open its connection to the app.
    expect(second.primes).toEqual([{ codeStepMemoryMb: 64, appUrl: 'http://app:3000' }]);
  });

  it('discards a spare that died while idle and boots a fresh one for the job', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    const spare = starts.finish(0);
    await Promise.resolve();
    spare.alive = false;

    const acquiring = supply.acquire();
    const fresh = starts.finish(1);
    expect(await acquiring).toEqual({ engine: fresh, bootMs: 25, preBooted: false });
  });

  it('falls back to its own boot when prewarming failed', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    starts.fail(0, new Error('fork failed'));
    const acquiring = supply.acquire();
    const fresh = starts.finish(1);
    expect(await acquiring).toMatchObject({ engine: fresh, preBooted: false });
  });

  it('kills the spare on close, even one still booting', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    const closing = supply.close();
    const spare = starts.finish(0);
    await closing;
    expect(spare.alive).toBe(false);
    // Nothing boots after close.
    await supply.release(spare, { reusable: true });
    await new Promise(setImmediate);
    expect(starts.count).toBe(1);
  });

  it('does not wait for a released engine to exit, and close waits for it', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: false });
    const acquiring = supply.acquire();
    const engine = starts.finish(0);
    await acquiring;
    // The process takes its time to exit; kill() has already made it unusable.
    const exited = defer<void>();
    let killed = false;
    engine.kill = async () => {
      engine.alive = false;
      killed = true;
      await exited.promise;
    };
    await supply.release(engine, { reusable: true });
    expect({ killed, alive: engine.alive }).toEqual({ killed: true, alive: false });
    let closed = false;
    const closing = supply.close().then(() => {
      closed = true;
    });
    await new Promise(setImmediate);
    expect(closed).toBe(false);
    exited.resolve();
    await closing;
    expect(closed).toBe(true);
  });

  it('boots spares at a lower priority and raises the one a job takes back', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    const spare = starts.finish(0);
    await new Promise(setImmediate);
    expect(spare.restored).toBe(0);
    const acquired = await supply.acquire();
    expect(acquired.engine).toBe(spare);
    expect(spare.restored).toBe(1);
    await new Promise(setImmediate);
    // The job's own boot (none here) would be at normal priority; every prewarm is a spare.
    expect(starts.spares).toEqual([true, true]);
    starts.finish(1);
    await supply.close();
  });

  it('boots later spares at the worker priority once raising one back was refused', async () => {
    const starts = fakeStarts();
    const supply = createColdEngineSupply({ start: starts.start, logger: silentLogger(), prewarm: true });
    supply.start();
    const spare = starts.finish(0);
    spare.canRestore = false;
    await new Promise(setImmediate);
    await supply.acquire();
    await new Promise(setImmediate);
    expect(starts.spares).toEqual([true, false]);
    starts.finish(1);
    await supply.close();
  });
});
