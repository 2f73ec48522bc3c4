import { createLogger } from '@flowbox/node-kit';
import type { RunJobData } from '@flowbox/protocol';
import { describe, expect, it, vi } from 'vitest';
import { AppMetrics } from '../metrics/app-metrics.ts';
import { ScheduleTicker } from './schedule-ticker.ts';
import type {
  PublishedSchedule,
  SchedulesRepository,
  TickInput,
  TickResult,
} from './schedules-repository.ts';

/** The repository's contract in memory: one row per (flow, time), first writer wins. */
function memorySchedules(...schedules: Array<Omit<PublishedSchedule, 'lastTick'>>) {
  const ticks = new Map<string, TickInput & { outcome: string }>();
  const published = new Set(schedules.map((schedule) => schedule.flowId));
  let seq = 1;
  const batches: number[] = [];
  const lastTick = (flowId: string) => {
    const times = [...ticks.values()].filter((t) => t.flowId === flowId).map((t) => t.scheduledAt.getTime());
    return times.length === 0 ? null : new Date(Math.max(...times));
  };
  const repo: SchedulesRepository = {
    async listChanged(after, recheck) {
      if (seq <= after && recheck.length === 0) return { changes: [], seq: after };
      const changes = schedules.map((schedule) => ({
        flowId: schedule.flowId,
        schedule: published.has(schedule.flowId)
          ? { ...schedule, lastTick: lastTick(schedule.flowId) }
          : null,
      }));
      return { changes, seq };
    },
    async fireMany(batch) {
      batches.push(batch.length);
      return batch.map((tick): TickResult => {
        if (!published.has(tick.flowId)) return { outcome: 'stale' };
        const key = `${tick.flowId}@${tick.scheduledAt.getTime()}`;
        if (ticks.has(key)) return { outcome: 'duplicate' };
        const outcome = tick.passOver ? 'missed' : 'fired';
        ticks.set(key, { ...tick, outcome });
        return outcome === 'fired' ? { outcome, rank: 1 } : { outcome };
      });
    },
    async passedTicks() {
      return [];
    },
  };
  const unpublish = (flowId = 'f') => {
    published.delete(flowId);
    seq++;
  };
  return { repo, ticks, batches, unpublish };
}

function tickerOn(repo: SchedulesRepository, jobs: RunJobData[], lateLimitMs = 10_000) {
  return new ScheduleTicker({
    schedules: repo,
    submit: async (runs) => {
      jobs.push(...runs.map((run) => run.job));
      return runs.map(() => 'queued');
    },
    metrics: new AppMetrics(),
    logger: createLogger({ name: 'test', level: 'silent' }),
    refreshMs: 1_000,
    lateLimitMs,
  });
}

const at = (iso: string) => new Date(iso);
const since = at('2026-11-29T09:00:00.500Z');
const every = (input: Record<string, unknown>, flowId = 'f') => ({
  flowId,
  flowVersionId: `${flowId}-v1`,
  trigger: { trigger: 'every', input: { seconds: 1, ...input } },
  since,
});

describe('ScheduleTicker', () => {
  it('fires each tick once, however many apps fire it', async () => {
    const { repo, ticks } = memorySchedules(every({}));
    const jobs: RunJobData[] = [];
    const apps = [tickerOn(repo, jobs), tickerOn(repo, jobs), tickerOn(repo, jobs)];
    for (const second of [1, 2, 3, 4]) {
      const now = at(`2026-11-29T09:00:0${second}.100Z`);
      await Promise.all(apps.map((app) => app.tick(now)));
    }
    expect([...ticks.values()].map((t) => t.scheduledAt.toISOString())).toEqual([
      '2026-11-29T09:00:01.000Z',
      '2026-11-29T09:00:02.000Z',
      '2026-11-29T09:00:03.000Z',
      '2026-11-29T09:00:04.000Z',
    ]);
    expect(jobs.map((job) => job.runId)).toEqual([...ticks.values()].map((t) => t.runId));
    expect(jobs[0]?.trigger?.body).toMatchObject({ scheduledAt: '2026-11-29T09:00:01.000Z' });
  });

  it('fires late ticks within the late limit, and none before its schedule began', async () => {
    const { repo, ticks } = memorySchedules(every({}));
    await tickerOn(repo, []).tick(at('2026-11-29T09:00:05.200Z'));
    expect(ticks.size).toBe(5);
    expect([...ticks.values()].every((t) => t.outcome === 'fired')).toBe(true);
  });

  it('catchUp none: records the last missed tick as missed, passing over the rest', async () => {
    const { repo, ticks } = memorySchedules(every({ catchUp: 'none' }));
    const jobs: RunJobData[] = [];
    // Every app was down from 09:00:00.5 to 09:01:00.2: 60 ticks due, 10 of them within the limit.
    await tickerOn(repo, jobs, 10_000).tick(at('2026-11-29T09:01:00.200Z'));
    const rows = [...ticks.values()];
    expect(rows[0]).toMatchObject({ outcome: 'missed', missed: 49 });
    expect(rows[0]?.scheduledAt.toISOString()).toBe('2026-11-29T09:00:50.000Z');
    expect(rows.slice(1).map((t) => t.outcome)).toEqual(Array(10).fill('fired'));
    expect(jobs).toHaveLength(10);
  });

  it('catchUp last: fires once for the last missed tick', async () => {
    const { repo, ticks } = memorySchedules(every({ catchUp: 'last' }));
    const jobs: RunJobData[] = [];
    await tickerOn(repo, jobs, 10_000).tick(at('2026-11-29T09:01:00.200Z'));
    const rows = [...ticks.values()];
    expect(rows[0]).toMatchObject({ outcome: 'fired', missed: 49 });
    expect(rows).toHaveLength(11);
    expect(jobs).toHaveLength(11);
  });

  it('stops at once when the version is no longer published', async () => {
    const { repo, ticks, unpublish } = memorySchedules(every({}));
    const ticker = tickerOn(repo, []);
    await ticker.tick(at('2026-11-29T09:00:01.100Z'));
    unpublish();
    await ticker.tick(at('2026-11-29T09:00:02.100Z'));
    await ticker.tick(at('2026-11-29T09:00:05.100Z'));
    expect(ticks.size).toBe(1);
  });

  it('records the ticks of many flows due at once in one statement, and their runs in one submit', async () => {
    const flows = Array.from({ length: 1_200 }, (_, i) => every({ seconds: 60 }, `f${i}`));
    const { repo, ticks, batches } = memorySchedules(...flows);
    const submits: number[] = [];
    const ticker = new ScheduleTicker({
      schedules: repo,
      submit: async (runs) => {
        submits.push(runs.length);
        return runs.map(() => 'queued');
      },
      metrics: new AppMetrics(),
      logger: createLogger({ name: 'test', level: 'silent' }),
      refreshMs: 1_000,
      lateLimitMs: 10_000,
    });
    await ticker.tick(at('2026-11-29T09:01:00.100Z'));
    await ticker.close();
    expect(ticks.size).toBe(1_200);
    expect(batches).toEqual([500, 500, 200]);
    expect(submits).toEqual([500, 500, 200]);
  });

  it('drops a stale flow of a batch and fires the others', async () => {
    const { repo, ticks, unpublish } = memorySchedules(every({}, 'a'), every({}, 'b'));
    const ticker = tickerOn(repo, []);
    await ticker.tick(at('2026-11-29T09:00:01.100Z'));
    unpublish('a');
    // 0.95 s after the last read: within the refresh, so only the stale tick of `a` tells.
    await ticker.tick(at('2026-11-29T09:00:02.050Z'));
    await ticker.tick(at('2026-11-29T09:00:03.100Z'));
    expect([...ticks.keys()].filter((key) => key.startsWith('a@'))).toHaveLength(1);
    expect([...ticks.keys()].filter((key) => key.startsWith('b@'))).toHaveLength(3);
  });

  it('waits a refresh after a failed pass instead of retrying at once', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-29T09:00:30.000Z') });
    try {
      let attempts = 0;
      const { repo } = memorySchedules(every({}));
      const failing: SchedulesRepository = {
        ...repo,
        async fireMany() {
          attempts++;
          throw new Error('Postgres is down');
        },
      };
      const ticker = tickerOn(failing, []);
      ticker.start();
      await vi.advanceTimersByTimeAsync(5_000);
      // One try a refresh (1 s here), not a loop on a tick that is due.
      expect(attempts).toBeGreaterThanOrEqual(4);
      expect(attempts).toBeLessThanOrEqual(6);
      await ticker.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
