import { DURATION_BUCKETS } from '@flowbox/node-kit';
import type { JobResult } from '@flowbox/protocol';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * A worker's Prometheus metrics (served on METRICS_PORT): jobs by final status, engine boots
 * (how long each took), provisioning time, cache hits and misses for bundles and pieces, and
 * the RSS of the engine it holds. Nothing in it comes from the worker's configuration: no URL,
 * no token.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly #jobs: Counter<'status'>;
  readonly #boots: Counter;
  readonly #bootSeconds: Histogram;
  readonly #provisionSeconds: Histogram;
  readonly #cache: Counter<'artifact' | 'outcome'>;
  #engineRss: () => Promise<number | undefined> = async () => undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'flowbox_worker_' });
    this.#jobs = new Counter({
      name: 'flowbox_worker_jobs_total',
      help: 'Jobs this worker ran, by the final status it reported.',
      labelNames: ['status'],
      registers,
    });
    this.#boots = new Counter({
      name: 'flowbox_worker_engine_boots_total',
      help: 'Engine processes this worker started (warm: when one is recycled; cold: one per job).',
      registers,
    });
    this.#bootSeconds = new Histogram({
      name: 'flowbox_worker_engine_boot_seconds',
      help: 'Engine start to ready.',
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#provisionSeconds = new Histogram({
      name: 'flowbox_worker_provision_seconds',
      help: "A job's flow bundle and pieces made ready in the cache (from S3 on a miss).",
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#cache = new Counter({
      name: 'flowbox_worker_cache_total',
      help: 'Provisioning cache lookups, by artifact (bundle, piece) and outcome (hit, miss).',
      labelNames: ['artifact', 'outcome'],
      registers,
    });
    const engineRss = () => this.#engineRss();
    new Gauge({
      name: 'flowbox_worker_engine_rss_bytes',
      help: 'Resident memory of the engine process the worker holds (0 when none).',
      registers,
      async collect() {
        this.set((await engineRss().catch(() => undefined)) ?? 0);
      },
    });
  }

  /** Where the engine RSS gauge reads from. */
  readEngineRss(read: () => Promise<number | undefined>): void {
    this.#engineRss = read;
  }

  engineBooted(bootMs: number): void {
    this.#boots.inc();
    this.#bootSeconds.observe(bootMs / 1000);
  }

  jobFinished(result: JobResult): void {
    this.#jobs.inc({ status: result.outcome.status });
    this.#provisionSeconds.observe(result.timings.provisionMs / 1000);
    const provisioning = result.provisioning;
    if (provisioning === undefined) return;
    this.#cache.inc({ artifact: 'bundle', outcome: provisioning.bundle });
    if (provisioning.pieceHits > 0)
      this.#cache.inc({ artifact: 'piece', outcome: 'hit' }, provisioning.pieceHits);
    if (provisioning.pieceMisses > 0) {
      this.#cache.inc({ artifact: 'piece', outcome: 'miss' }, provisioning.pieceMisses);
    }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
