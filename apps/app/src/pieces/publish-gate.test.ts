import { describe, expect, it } from 'vitest';
import { PublishGate } from './publish-gate.ts';

describe('PublishGate', () => {
  it('runs up to its concurrency, queues up to its limit, refuses the next with PIECE_PUBLISH_BUSY', async () => {
    const gate = new PublishGate({ concurrency: 2, maxQueued: 1 });
    const releases: Array<() => void> = [];
    const started: number[] = [];
    const onStart = new Map<number, () => void>();
    const startOf = (id: number) => new Promise<void>((resolve) => onStart.set(id, resolve));
    const task = (id: number) => () =>
      new Promise<number>((resolve) => {
        started.push(id);
        onStart.get(id)?.();
        releases.push(() => resolve(id));
      });
    const thirdStarted = startOf(3);
    const results = [1, 2, 3].map((id) => gate.run(task(id)));
    await expect(gate.run(task(4))).rejects.toMatchObject({ code: 'PIECE_PUBLISH_BUSY' });
    expect([gate.running, gate.queued]).toEqual([2, 1]);
    expect(started).toEqual([1, 2]);
    releases.shift()?.();
    expect(await results[0]).toBe(1);
    await thirdStarted;
    expect(started).toEqual([1, 2, 3]);
    expect([gate.running, gate.queued]).toEqual([2, 0]);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all(results)).toEqual([1, 2, 3]);
    expect([gate.running, gate.queued]).toEqual([0, 0]);
  });

  it('gives the place back when a task throws', async () => {
    const gate = new PublishGate({ concurrency: 1, maxQueued: 0 });
    await expect(gate.run(() => Promise.reject(new Error('bad archive')))).rejects.toThrow('bad archive');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
  });
});
