import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import type { RunJobData, TriggerPayload } from '@flowbox/protocol';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { TickLoop } from '../tickers/tick-loop.ts';
import { parseScheduleSpec, type ScheduleSpec } from './schedule-spec.ts';
import type { PublishedSchedule, SchedulesRepository, TickResult } from './schedules-repository.ts';

/** Where a fired tick's run goes (RunHandoff.submit): a waiting worker, or the queue. */
export type SubmitRun = (job: RunJobData, rank: number) => Promise<unknown>;

/** Ticks walked per flow and pass at most: bounds a pass after a long outage (the next goes on). */
const MAX_WALK = 100_000;
/** A tick fired this much after its time counts as late. */
const LATE_MS = 1_000;

interface Entry {
  flowId: string;
  flowVersionId: string;
  spec: ScheduleSpec;
  /** Ticks up to and including this are done (recorded, here or by another app). */
  from: Date;
  /** The next tick after `from`, or null: none comes. */
  next: Date | null;
}

/**
 * Fires the ticks of every published schedule. Every app runs one, and every app fires every
 * tick: the tick's row in Postgres (schedules-repository.ts) lets exactly one of them create the
 * run, so an app that dies costs no tick and needs no failover. The schedules are read from
 * Postgres every `refreshMs` (tickers/tick-loop.ts; and at once when a tick finds its version no longer published),
 * so nothing about them lives in Redis: a Redis restarted empty loses no tick, and a run whose
 * job could not be queued stays QUEUED for the reconciler to enqueue. A tick not fired within
 * `lateLimitMs` of its time (every app was down) is missed, and its trigger's `catchUp` decides.
 */
export class ScheduleTicker {
  readonly #repo: SchedulesRepository;
  readonly #submit: SubmitRun;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #lateLimitMs: number;
  readonly #loop: TickLoop<Entry, PublishedSchedule>;
  /** Runs being handed over or queued: not awaited by a pass, so a slow Redis delays no tick. */
  readonly #submitting = new Set<Promise<void>>();

  constructor(deps: {
    schedules: SchedulesRepository;
    submit: SubmitRun;
    metrics: AppMetrics;
    logger: Logger;
    refreshMs: number;
    lateLimitMs: number;
  }) {
    this.#repo = deps.schedules;
    this.#submit = deps.submit;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#lateLimitMs = deps.lateLimitMs;
    this.#loop = new TickLoop({
      logger: deps.logger,
      refreshMs: deps.refreshMs,
      failedMessage: 'schedule pass failed; trying again',
      list: () => this.#repo.listPublished(),
      apply: (rows) => this.#apply(rows),
      takeDue: (entry, now) => this.#fireDue(entry, now),
      nextAt: (entry) => entry.next?.getTime() ?? null,
    });
  }

  start(): void {
    this.#loop.start();
  }

  async close(): Promise<void> {
    await this.#loop.close();
    await Promise.all(this.#submitting);
  }

  /** One pass: reload the schedules when due, fire every tick that is due. */
  async tick(now = new Date()): Promise<void> {
    await this.#loop.tick(now);
  }

  #apply(rows: PublishedSchedule[]): void {
    const entries = this.#loop.entries;
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.flowId);
      const known = entries.get(row.flowId);
      const from = latest(
        row.since,
        row.lastTick,
        known?.flowVersionId === row.flowVersionId ? known.from : null,
      );
      if (known?.flowVersionId === row.flowVersionId) {
        known.from = from;
        known.next = known.spec.nextAfter(from);
        continue;
      }
      const spec = this.#specOf(row);
      if (spec === null) continue;
      entries.set(row.flowId, {
        flowId: row.flowId,
        flowVersionId: row.flowVersionId,
        spec,
        from,
        next: spec.nextAfter(from),
      });
    }
    for (const flowId of entries.keys()) if (!seen.has(flowId)) entries.delete(flowId);
  }

  #specOf(row: PublishedSchedule): ScheduleSpec | null {
    try {
      // Checked at publish; the floor is not applied again to what is published already.
      return parseScheduleSpec(row.trigger, { minIntervalSeconds: 0 });
    } catch (error) {
      this.#logger.error(
        { err: error, flowId: row.flowId },
        'a published schedule cannot be read; it does not tick',
      );
      return null;
    }
  }

  async #fireDue(entry: Entry, now: Date): Promise<void> {
    if (entry.next === null || entry.next > now) return;
    const cutoff = now.getTime() - this.#lateLimitMs;
    // Missed: the ticks before the cutoff. Only the last of them may fire (catchUp last) or is
    // recorded as missed (catchUp none), carrying how many it passes over.
    let lastMissed: Date | null = null;
    let passedOver = 0;
    let at: Date | null = entry.next;
    let walked = 0;
    while (at !== null && at.getTime() < cutoff && walked < MAX_WALK) {
      if (lastMissed !== null) passedOver++;
      lastMissed = at;
      at = entry.spec.nextAfter(at);
      walked++;
    }
    if (lastMissed !== null) {
      const done = await this.#record(entry, lastMissed, passedOver, entry.spec.catchUp === 'none', now);
      if (!done) return;
    }
    while (at !== null && at <= now) {
      if (!(await this.#record(entry, at, 0, false, now))) return;
      at = entry.spec.nextAfter(at);
    }
  }

  /** Records one tick; false when this schedule is gone (its entry was dropped). */
  async #record(
    entry: Entry,
    scheduledAt: Date,
    missed: number,
    passOver: boolean,
    now: Date,
  ): Promise<boolean> {
    const runId = randomUUID();
    const firedAt = new Date();
    const trigger: TriggerPayload = {
      method: 'POST',
      headers: {},
      query: {},
      body: { scheduledAt: scheduledAt.toISOString(), firedAt: firedAt.toISOString() },
      rawBody: null,
      rawBodyEncoding: 'utf8',
    };
    const result = await this.#repo.fire({
      runId,
      flowId: entry.flowId,
      flowVersionId: entry.flowVersionId,
      scheduledAt,
      trigger,
      missed,
      overlap: entry.spec.overlap,
      passOver,
    });
    if (result.outcome === 'stale') {
      this.#loop.entries.delete(entry.flowId);
      this.#loop.reloadNext();
      return false;
    }
    entry.from = scheduledAt;
    entry.next = entry.spec.nextAfter(scheduledAt);
    this.#count(result, firedAt.getTime() - scheduledAt.getTime(), missed);
    if (result.outcome === 'fired') {
      const submitting = this.#enqueue(entry, runId, trigger, result.rank);
      this.#submitting.add(submitting);
      void submitting.finally(() => this.#submitting.delete(submitting));
    } else if (result.outcome !== 'duplicate') {
      this.#logger.info(
        { flowId: entry.flowId, scheduledAt, outcome: result.outcome, missed, at: now },
        'a schedule tick started no run',
      );
    }
    return true;
  }

  async #enqueue(entry: Entry, runId: string, trigger: TriggerPayload, rank: number): Promise<void> {
    const job: RunJobData = {
      version: 1,
      type: 'run-flow',
      runId,
      flowId: entry.flowId,
      flowVersionId: entry.flowVersionId,
      trigger,
      syncInstanceId: null,
      acceptedAt: Date.now(),
    };
    try {
      this.#metrics.runSubmitted(await this.#submitted(job, rank));
    } catch (error) {
      // The run is QUEUED in Postgres: the reconciler enqueues it once Redis is back.
      this.#logger.warn({ err: error, runId, flowId: entry.flowId }, 'a tick run could not be queued yet');
    }
  }

  async #submitted(job: RunJobData, rank: number): Promise<'handed' | 'queued'> {
    const path = await this.#submit(job, rank);
    return path === 'handed' ? 'handed' : 'queued';
  }

  #count(result: TickResult, lagMs: number, missed: number): void {
    switch (result.outcome) {
      case 'fired':
        this.#metrics.runAccepted();
        this.#metrics.scheduleTick('fired', lagMs > LATE_MS, lagMs);
        break;
      case 'skipped':
        this.#metrics.scheduleTick('skipped', false, lagMs);
        break;
      case 'missed':
        this.#metrics.scheduleTick('missed', false, lagMs);
        break;
      case 'duplicate':
      case 'stale':
        return;
    }
    if (missed > 0) this.#metrics.scheduleTicksPassedOver(missed);
  }
}

function latest(...dates: Array<Date | null>): Date {
  let best = new Date(0);
  for (const date of dates) if (date !== null && date > best) best = date;
  return best;
}
