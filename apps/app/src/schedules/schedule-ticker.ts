import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import type { RunJobData } from '@flowbox/protocol';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { TickLoop } from '../tickers/tick-loop.ts';
import { parseScheduleSpec, type ScheduleSpec } from './schedule-spec.ts';
import type {
  PublishedSchedule,
  ScheduleChange,
  SchedulesRepository,
  TickInput,
  TickResult,
} from './schedules-repository.ts';

/** Where fired ticks' runs go (RunHandoff.submitMany): waiting workers, or the queue in bulk. */
export type SubmitRuns = (runs: ReadonlyArray<{ job: RunJobData; rank: number }>) => Promise<unknown[]>;

/** Ticks recorded by one statement at most. */
const BATCH = 500;
/**
 * Statements recording ticks at once. Each writes its ticks in flow order, so concurrent
 * statements (of this app or another) take the tick rows' locks in one order: no deadlock.
 */
const BATCHES_AT_ONCE = 2;
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
 * run, so an app that dies costs no tick and needs no failover. Every `refreshMs` the ticker
 * reads the flows changed since its last read (tickers/tick-loop.ts; and a flow at once when a
 * tick finds its version no longer published), and due ticks are recorded many to a statement,
 * so nothing about the schedules lives in Redis: a Redis restarted empty loses no tick, and a run whose
 * job could not be queued stays QUEUED for the reconciler to enqueue. A tick not fired within
 * `lateLimitMs` of its time (every app was down) is missed, and its trigger's `catchUp` decides.
 */
export class ScheduleTicker {
  readonly #repo: SchedulesRepository;
  readonly #submit: SubmitRuns;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #lateLimitMs: number;
  readonly #loop: TickLoop<Entry, ScheduleChange>;
  /** Runs being handed over or queued: not awaited by a pass, so a slow Redis delays no tick. */
  readonly #submitting = new Set<Promise<void>>();

  constructor(deps: {
    schedules: SchedulesRepository;
    submit: SubmitRuns;
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
      changes: async (after, recheck) => {
        const { changes, seq } = await this.#repo.listChanged(after, recheck);
        return { rows: changes, seq };
      },
      apply: (rows) => this.#apply(rows),
      takeDue: (entries, now) => this.#fireDue(entries, now),
      nextAt: (entry) => entry.next?.getTime() ?? null,
      keyOf: (entry) => entry.flowId,
    });
  }

  start(): void {
    this.#loop.start();
  }

  async close(): Promise<void> {
    await this.#loop.close();
    await Promise.all(this.#submitting);
  }

  /** One pass: read the changed schedules when due, fire every tick that is due. */
  async tick(now = new Date()): Promise<void> {
    await this.#loop.tick(now);
  }

  #apply(changes: ScheduleChange[]): void {
    const entries = this.#loop.entries;
    for (const { flowId, schedule: row } of changes) {
      if (row === null) {
        entries.delete(flowId);
        continue;
      }
      const known = entries.get(flowId);
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
      if (spec === null) {
        entries.delete(flowId);
        continue;
      }
      entries.set(flowId, {
        flowId,
        flowVersionId: row.flowVersionId,
        spec,
        from,
        next: spec.nextAfter(from),
      });
    }
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

  /**
   * Fires the due ticks of these entries in rounds: a round records the next due tick of every
   * entry, BATCH to a statement, so a flow's ticks are recorded in order and one statement never
   * holds two ticks of one flow (its overlap and queue checks see the one before).
   */
  async #fireDue(entries: Entry[], now: Date): Promise<void> {
    // In flow order, so every app cuts the same batches.
    let plans = entries
      .map((entry) => ({ entry, ticks: this.#dueTicks(entry, now) }))
      .sort((a, b) => (a.entry.flowId < b.entry.flowId ? -1 : a.entry.flowId > b.entry.flowId ? 1 : 0));
    while (plans.length > 0) {
      const round = plans.flatMap(({ entry, ticks }) => {
        const tick = ticks.shift();
        return tick === undefined ? [] : [{ entry, tick }];
      });
      const batches: Array<typeof round> = [];
      for (let i = 0; i < round.length; i += BATCH) batches.push(round.slice(i, i + BATCH));
      const live = new Set<Entry>();
      const next = async (): Promise<void> => {
        for (let batch = batches.shift(); batch !== undefined; batch = batches.shift()) {
          for (const entry of await this.#recordBatch(batch, now)) live.add(entry);
        }
      };
      await Promise.all(Array.from({ length: BATCHES_AT_ONCE }, next));
      plans = plans.filter((plan) => plan.ticks.length > 0 && live.has(plan.entry));
    }
  }

  /** The entry's ticks due at `now`, in order: the last missed one first when an outage passed some. */
  #dueTicks(entry: Entry, now: Date): PlannedTick[] {
    if (entry.next === null || entry.next > now) return [];
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
    const ticks: PlannedTick[] = [];
    if (lastMissed !== null) {
      ticks.push({ scheduledAt: lastMissed, missed: passedOver, passOver: entry.spec.catchUp === 'none' });
    }
    while (at !== null && at <= now) {
      ticks.push({ scheduledAt: at, missed: 0, passOver: false });
      at = entry.spec.nextAfter(at);
    }
    return ticks;
  }

  /** Records one tick of each entry in one statement; answers the entries still published. */
  async #recordBatch(batch: Array<{ entry: Entry; tick: PlannedTick }>, now: Date): Promise<Entry[]> {
    if (batch.length === 0) return [];
    const firedAt = new Date();
    const inputs = batch.map(
      ({ entry, tick }): TickInput => ({
        runId: randomUUID(),
        flowId: entry.flowId,
        flowVersionId: entry.flowVersionId,
        scheduledAt: tick.scheduledAt,
        trigger: {
          method: 'POST',
          headers: {},
          query: {},
          body: { scheduledAt: tick.scheduledAt.toISOString(), firedAt: firedAt.toISOString() },
          rawBody: null,
          rawBodyEncoding: 'utf8',
        },
        missed: tick.missed,
        overlap: entry.spec.overlap,
        passOver: tick.passOver,
      }),
    );
    const results = await this.#repo.fireMany(inputs);
    const live: Entry[] = [];
    const fired: Array<{ job: RunJobData; rank: number }> = [];
    batch.forEach(({ entry, tick }, index) => {
      const result = results[index] ?? { outcome: 'stale' };
      const input = inputs[index] as TickInput;
      if (result.outcome === 'stale') {
        this.#loop.recheck(entry.flowId);
        return;
      }
      live.push(entry);
      entry.from = tick.scheduledAt;
      entry.next = entry.spec.nextAfter(tick.scheduledAt);
      this.#count(result, firedAt.getTime() - tick.scheduledAt.getTime(), tick.missed);
      if (result.outcome === 'fired') {
        fired.push({ job: runJob(input), rank: result.rank });
      } else if (result.outcome !== 'duplicate') {
        this.#logger.info(
          {
            flowId: entry.flowId,
            scheduledAt: tick.scheduledAt,
            outcome: result.outcome,
            missed: tick.missed,
            at: now,
          },
          'a schedule tick started no run',
        );
      }
    });
    if (fired.length > 0) {
      const submitting = this.#enqueue(fired);
      this.#submitting.add(submitting);
      void submitting.finally(() => this.#submitting.delete(submitting));
    }
    return live;
  }

  async #enqueue(runs: Array<{ job: RunJobData; rank: number }>): Promise<void> {
    try {
      const paths = await this.#submit(runs);
      for (const path of paths) this.#metrics.runSubmitted(path === 'handed' ? 'handed' : 'queued');
    } catch (error) {
      // The runs are QUEUED in Postgres: the reconciler enqueues them once Redis is back.
      this.#logger.warn(
        { err: error, runs: runs.length, flowIds: runs.slice(0, 10).map((run) => run.job.flowId) },
        'tick runs could not be queued yet',
      );
    }
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

interface PlannedTick {
  scheduledAt: Date;
  /** Ticks passed over before this one (after an outage). */
  missed: number;
  /** Record it missed (catchUp none) instead of firing it. */
  passOver: boolean;
}

function runJob(tick: TickInput): RunJobData {
  return {
    version: 1,
    type: 'run-flow',
    runId: tick.runId,
    flowId: tick.flowId,
    flowVersionId: tick.flowVersionId,
    trigger: tick.trigger,
    syncInstanceId: null,
    acceptedAt: Date.now(),
  };
}

function latest(...dates: Array<Date | null>): Date {
  let best = new Date(0);
  for (const date of dates) if (date !== null && date > best) best = date;
  return best;
}
