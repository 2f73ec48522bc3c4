import type { Logger } from '@flowbox/node-kit';
import { LeaderPass } from '../db/leader-pass.ts';
import type { Pool } from '../db/pool.ts';
import type { RefusedDeliveriesRepository } from '../deliveries/refused-deliveries-repository.ts';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { checkpointKeys } from '../queue/durable-dispatch.ts';
import { objectKeys } from '../storage/object-storage.ts';
import type { RemovedRun, RetentionCursor, RunsRepository } from './runs-repository.ts';

const LOCK_NAME = 'run-retention';
const LOCK_SECONDS = 120;
/**
 * Runs read and deleted per statement: one index range read, one DELETE by id array (10,000 rows
 * hold their row locks for a fraction of a second; only finished runs, which nothing writes).
 */
const BATCH_SIZE = 10_000;
/** Keys in one S3 DeleteObjects request (its limit). */
const DELETE_PER_REQUEST = 1_000;
/** DeleteObjects requests in flight at once: S3 answers them in parallel. */
const DELETE_CONCURRENCY = 8;
/** A pass stops taking batches after this long, well inside its lock; a backlog goes over several passes. */
const PASS_BUDGET_MS = 60_000;
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
 * RUN_RETENTION_DAYS: deletes finished runs older than that, with their S3 logs, in batches of
 * 10,000 (one read and one DELETE each, their objects in parallel DeleteObjects requests) for up
 * to a minute a pass. Every app runs one; the passes take turns under a leader lock (db/leader-lock.ts), as the
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
        const deadline = Date.now() + PASS_BUDGET_MS;
        let after: RetentionCursor | undefined;
        // A batch's rows are deleted while the next batch is read and its objects deleted: the
        // pass costs about the longer of the two, not their sum. Each row still goes after its logs.
        let removing: Promise<number> | undefined;
        try {
          do {
            const batch = await this.#runs.retentionBatch(this.#days, BATCH_SIZE, after);
            await deleteInParallel(this.#storage, storageKeys(batch.runs));
            done.logs += batch.runs.filter((run) => run.logKey !== null).length;
            if (removing !== undefined) done.runs += await removing;
            removing = this.#runs.remove(batch.runs.map((run) => run.id));
            after = batch.next ?? undefined;
          } while (after !== undefined && Date.now() < deadline);
          done.runs += await removing;
          removing = undefined;
        } finally {
          // Settled before the pass gives up its lock; a failure above is what the pass reports.
          await removing?.catch(() => 0);
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

/** Every object a run may have left: its log (recorded or not) and its checkpoints. */
function storageKeys(runs: readonly RemovedRun[]): string[] {
  // The engine uploads to runs/<id>/log.json whether or not the run recorded its key.
  const keys = new Set(runs.map((run) => objectKeys.runLog(run.id)));
  for (const run of runs) if (run.logKey !== null) keys.add(run.logKey);
  // And its checkpoints, `checkpoints/<id>/<n>.json` for each pause it could have made.
  for (const run of runs) for (const key of checkpointKeys(run.id, run.resumes)) keys.add(key);
  return [...keys];
}

/** Deletes `keys` in DeleteObjects requests of up to 1000, DELETE_CONCURRENCY at a time. */
async function deleteInParallel(storage: RetentionStorage, keys: readonly string[]): Promise<void> {
  const requests: string[][] = [];
  for (let at = 0; at < keys.length; at += DELETE_PER_REQUEST) {
    requests.push(keys.slice(at, at + DELETE_PER_REQUEST));
  }
  let next = 0;
  const lane = async () => {
    for (let request = requests[next++]; request !== undefined; request = requests[next++]) {
      await storage.deleteMany(request);
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, requests.length) }, lane));
}
