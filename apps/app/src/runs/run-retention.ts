import type { Logger } from '@flowbox/node-kit';
import { LeaderPass } from '../db/leader-pass.ts';
import type { Pool } from '../db/pool.ts';
import type { RefusedDeliveriesRepository } from '../deliveries/refused-deliveries-repository.ts';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { checkpointKeys } from '../queue/durable-dispatch.ts';
import { objectKeys } from '../storage/object-storage.ts';
import type { RunsRepository } from './runs-repository.ts';

const LOCK_NAME = 'run-retention';
const LOCK_SECONDS = 120;
/** Runs deleted per statement (and S3 logs per DeleteObjects request): short locks, small requests. */
const BATCH_SIZE = 100;
/** Keys in one S3 DeleteObjects request (its limit). */
const DELETE_PER_REQUEST = 1_000;
/** Batches per pass: bounds a pass well inside its lock; a backlog goes over several passes. */
const MAX_BATCHES = 50;
const INTERVAL_MS = 60_000;

/** Expired idempotency keys deleted per pass (one statement). */
const KEYS_PER_PASS = 10_000;

/** What one retention pass deleted. */
export interface Retained {
  runs: number;
  logs: number;
  tombstones: number;
  refusedDeliveries: number;
  /** Expired webhook idempotency keys. */
  idempotencyKeys: number;
  /** Schedule ticks as old as the retention (each flow's latest is kept). */
  ticks: number;
}

/** Where run logs are deleted (ObjectStorage). */
export interface RetentionStorage {
  deleteMany(keys: readonly string[]): Promise<void>;
}

/**
 * RUN_RETENTION_DAYS: deletes finished runs older than that, with their S3 logs, in small
 * batches. Every app runs one; the passes take turns under a leader lock (db/leader-lock.ts), as the
 * reconciler's do, so one app deletes at a time. A batch's logs go before its rows: a failure in
 * between leaves rows whose log is gone (read as a missing log), never a log nobody will delete.
 * Each deleted run leaves a tombstone, so its re-run answers 410, not 404; tombstones go after
 * as long again. Refused webhook deliveries and schedule ticks older than that (each flow's
 * latest tick kept) and expired idempotency keys go in the same pass (an expired key is also
 * taken over by the next request that sends it, so a late delete costs only rows).
 */
export class RunRetention {
  readonly #pass: LeaderPass;
  readonly #runs: RunsRepository;
  readonly #refusedDeliveries: Pick<RefusedDeliveriesRepository, 'removeOlderThan'> | undefined;
  readonly #storage: RetentionStorage;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #days: number;

  constructor(options: {
    pool: Pool;
    /** This app's INSTANCE_ID: who holds the lock. */
    holder: string;
    runs: RunsRepository;
    /** Refused webhook deliveries, expired by the same days. */
    refusedDeliveries?: Pick<RefusedDeliveriesRepository, 'removeOlderThan'>;
    storage: RetentionStorage;
    metrics: AppMetrics;
    logger: Logger;
    /** RUN_RETENTION_DAYS; 0 keeps everything (no pass runs). */
    days: number;
  }) {
    this.#pass = new LeaderPass({
      pool: options.pool,
      name: LOCK_NAME,
      holder: options.holder,
      ttlSeconds: LOCK_SECONDS,
      intervalMs: INTERVAL_MS,
    });
    this.#runs = options.runs;
    this.#refusedDeliveries = options.refusedDeliveries;
    this.#storage = options.storage;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#days = options.days;
  }

  start(): void {
    if (this.#days === 0) return;
    this.#pass.start(
      () => this.retain(),
      (error) => this.#logger.warn({ err: error }, 'retention pass failed; trying again next interval'),
    );
  }

  /** One pass, unless another is on (here or in another app); returns what it deleted. */
  async retain(): Promise<Retained> {
    const done: Retained = {
      runs: 0,
      logs: 0,
      tombstones: 0,
      refusedDeliveries: 0,
      idempotencyKeys: 0,
      ticks: 0,
    };
    if (this.#days === 0) return done;
    try {
      await this.#pass.run(async () => {
        for (let batch = 0; batch < MAX_BATCHES; batch++) {
          const runs = await this.#runs.retentionBatch(this.#days, BATCH_SIZE);
          if (runs.length === 0) break;
          // The engine uploads to runs/<id>/log.json whether or not the run recorded its key.
          const keys = new Set(runs.map((run) => objectKeys.runLog(run.id)));
          for (const run of runs) if (run.logKey !== null) keys.add(run.logKey);
          // And its checkpoints, `checkpoints/<id>/<n>.json` for each pause it could have made.
          for (const run of runs) for (const key of checkpointKeys(run.id, run.resumes)) keys.add(key);
          const all = [...keys];
          for (let at = 0; at < all.length; at += DELETE_PER_REQUEST) {
            await this.#storage.deleteMany(all.slice(at, at + DELETE_PER_REQUEST));
          }
          done.logs += runs.filter((run) => run.logKey !== null).length;
          done.runs += await this.#runs.remove(runs.map((run) => run.id));
          if (runs.length < BATCH_SIZE) break;
        }
        done.tombstones = await this.#runs.pruneTombstones(this.#days);
        done.refusedDeliveries = (await this.#refusedDeliveries?.removeOlderThan(this.#days)) ?? 0;
        done.idempotencyKeys = await this.#runs.pruneIdempotencyKeys(KEYS_PER_PASS);
        done.ticks = await this.#runs.pruneScheduleTicks(this.#days);
      });
    } finally {
      this.#metrics.retentionDeleted('run', done.runs);
      this.#metrics.retentionDeleted('log', done.logs);
      this.#metrics.retentionDeleted('tombstone', done.tombstones);
      this.#metrics.retentionDeleted('refused_delivery', done.refusedDeliveries);
      this.#metrics.retentionDeleted('idempotency_key', done.idempotencyKeys);
      this.#metrics.retentionDeleted('schedule_tick', done.ticks);
      if (done.runs + done.tombstones + done.refusedDeliveries + done.idempotencyKeys + done.ticks > 0) {
        this.#logger.info(
          { ...done, retentionDays: this.#days },
          'retention deleted old runs and their logs',
        );
      }
    }
    return done;
  }

  close(): Promise<void> {
    return this.#pass.close();
  }
}
