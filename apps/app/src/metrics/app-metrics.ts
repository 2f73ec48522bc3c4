import { DURATION_BUCKETS } from '@flowbox/node-kit';
import type { FinalRunStatus, JobTimings } from '@flowbox/protocol';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CacheUsage } from '../cache/bounded-cache.ts';

/** What the gauges read when Prometheus scrapes (each read once per scrape). */
/** What resumed a paused run (flowbox_runs_resumed_total). */
export type ResumeCause = 'timer' | 'pause' | 'reconciler' | 'request' | 'child';

export interface AppMetricsSources {
  queueCounts(): Promise<{ waiting: number; active: number; delayed: number }>;
  connectedWorkers(): number;
  busyWorkers(): number;
  /** Workers of this app with a poll out: idle, ready for a run handed to them directly. */
  waitingWorkers(): number;
  syncCallersWaiting(): number;
  /** The app's bounded caches by name (published_flows, flow_bundles, …). */
  caches(): Record<string, CacheUsage>;
}

/** The parts of a run's latency anatomy (JobTimings), as the `part` label. */
const ANATOMY_PARTS = ['queueMs', 'provisionMs', 'bootMs', 'runMs', 'logPersistMs'] as const;

/**
 * The app's Prometheus metrics (`GET /metrics`), in a registry of its own: runs accepted and
 * finished by final status, webhook answers by status, run duration and each part of its
 * anatomy, the queue, workers and sync callers, and engine callbacks by route and result.
 * Labels are bounded and chosen by flowbox, never by a user: statuses, routes and status codes.
 * No flow id: there may be any number, and a flow id is all anyone needs to call its webhook.
 */
export class AppMetrics {
  readonly registry = new Registry();
  readonly #runsAccepted: Counter;
  readonly #runsSubmitted: Counter<'path'>;
  readonly #runsFinished: Counter<'status'>;
  readonly #webhookAnswers: Counter<'status'>;
  readonly #callbacks: Counter<'route' | 'result'>;
  readonly #runsRecovered: Counter<'action'>;
  readonly #retentionDeleted: Counter<'kind'>;
  readonly #signatureRefused: Counter<'scheme'>;
  readonly #apiKeyRefused: Counter<'answer'>;
  readonly #metricsTokenRefused: Counter<'answer'>;
  readonly #runDuration: Histogram<'status'>;
  readonly #anatomy: Histogram<'part'>;
  readonly #scheduleTicks: Counter<'outcome'>;
  readonly #scheduleLate: Counter;
  readonly #schedulePassedOver: Counter;
  readonly #scheduleLag: Histogram;
  readonly #runsPaused: Counter;
  readonly #runsResumed: Counter<'cause'>;
  readonly #resumeLate: Histogram;
  readonly #pollsStarted: Counter;
  readonly #polls: Counter<'outcome'>;
  readonly #pollItems: Counter;
  readonly #pollDuration: Histogram;
  #sources: AppMetricsSources | null = null;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'flowbox_app_' });
    this.#runsAccepted = new Counter({
      name: 'flowbox_runs_accepted_total',
      help: 'Runs accepted on this app: by a webhook, a schedule tick, a manual run or a re-run.',
      registers,
    });
    this.#runsSubmitted = new Counter({
      name: 'flowbox_runs_submitted_total',
      help: "Webhook runs sent on after acceptance, by path: handed (to one of this app's workers that was waiting, QUEUE_DIRECT_HANDOFF) or queued (BullMQ).",
      labelNames: ['path'],
      registers,
    });
    this.#runsFinished = new Counter({
      name: 'flowbox_runs_finished_total',
      help: 'Runs this app recorded in a final state, by status.',
      labelNames: ['status'],
      registers,
    });
    this.#webhookAnswers = new Counter({
      name: 'flowbox_webhook_responses_total',
      help: 'Webhook requests answered, by HTTP status.',
      labelNames: ['status'],
      registers,
    });
    this.#callbacks = new Counter({
      name: 'flowbox_engine_callbacks_total',
      help: 'Engine callbacks answered, by route (steps, response) and HTTP status.',
      labelNames: ['route', 'result'],
      registers,
    });
    this.#runsRecovered = new Counter({
      name: 'flowbox_runs_recovered_total',
      help: 'Runs the reconciler recovered after Redis lost their job: requeued (QUEUED, enqueued again) or worker_lost (RUNNING, the lost-worker path).',
      labelNames: ['action'],
      registers,
    });
    this.#retentionDeleted = new Counter({
      name: 'flowbox_retention_deleted_total',
      help: 'What run retention (RUN_RETENTION_DAYS) deleted on this app, by kind: run (rows), log (S3 objects), tombstone, refused_delivery (refused webhook deliveries), idempotency_key (expired webhook keys), schedule_tick.',
      labelNames: ['kind'],
      registers,
    });
    this.#signatureRefused = new Counter({
      name: 'flowbox_webhook_signature_refused_total',
      help: "Webhooks of signed flows (trigger.verify) refused 401 WEBHOOK_SIGNATURE_INVALID before any run existed, by the flow's scheme.",
      labelNames: ['scheme'],
      registers,
    });
    this.#apiKeyRefused = new Counter({
      name: 'flowbox_api_key_refused_total',
      help: 'Management API requests with a wrong API key, by answer: 401, or 429 once their address passed API_KEY_MAX_FAILURES.',
      labelNames: ['answer'],
      registers,
    });
    this.#metricsTokenRefused = new Counter({
      name: 'flowbox_metrics_token_refused_total',
      help: '/metrics scrapes with a wrong METRICS_TOKEN, by answer: 401, or 429 once their address passed API_KEY_MAX_FAILURES.',
      labelNames: ['answer'],
      registers,
    });
    this.#runDuration = new Histogram({
      name: 'flowbox_run_duration_seconds',
      help: "Accepted to final (the run's totalMs), for runs a worker reported, by final status.",
      labelNames: ['status'],
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#anatomy = new Histogram({
      name: 'flowbox_run_phase_seconds',
      help: "Each part of a run's latency anatomy: queue, provision, boot, run, logPersist.",
      labelNames: ['part'],
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#scheduleTicks = new Counter({
      name: 'flowbox_schedule_ticks_total',
      help: 'Schedule ticks this app recorded (each tick is recorded by one app), by outcome: fired (a run), skipped (overlap or a full queue) or missed (after an outage, catchUp none).',
      labelNames: ['outcome'],
      registers,
    });
    this.#scheduleLate = new Counter({
      name: 'flowbox_schedule_ticks_late_total',
      help: 'Schedule ticks fired more than 1 s after their time.',
      registers,
    });
    this.#schedulePassedOver = new Counter({
      name: 'flowbox_schedule_ticks_passed_over_total',
      help: 'Ticks passed over after an outage without a row of their own (catchUp fires or records only the last).',
      registers,
    });
    this.#scheduleLag = new Histogram({
      name: 'flowbox_schedule_tick_lag_seconds',
      help: "A recorded tick's time to the moment this app recorded it.",
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#runsPaused = new Counter({
      name: 'flowbox_runs_paused_total',
      help: 'Pauses this app recorded: a run that waits (a delay, a request, a child run, a retry backoff) with no worker held.',
      registers,
    });
    this.#runsResumed = new Counter({
      name: 'flowbox_runs_resumed_total',
      help: 'Paused runs this app resumed, by cause: timer (its delayed job), pause (due or answered when it paused), reconciler (a timer Redis lost, a resume lost after its answer), request (a wait URL) or child (the end of a sub-flow run).',
      labelNames: ['cause'],
      registers,
    });
    this.#resumeLate = new Histogram({
      name: 'flowbox_run_resume_late_seconds',
      help: "How late a resumed run's dispatch came after its earliest due timer (0 when on time or not a timer).",
      buckets: [0, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
      registers,
    });
    this.#pollsStarted = new Counter({
      name: 'flowbox_polls_started_total',
      help: 'Polls of polling triggers this app took a tick for and queued for its workers (each tick is taken by one app).',
      registers,
    });
    this.#polls = new Counter({
      name: 'flowbox_polls_total',
      help: 'Polls whose outcome reached this app, by outcome: ok (its items recorded), failed (the poll threw, timed out or its worker was lost: the state stays, the next interval polls again) or stale (its lease had ended: dropped).',
      labelNames: ['outcome'],
      registers,
    });
    this.#pollItems = new Counter({
      name: 'flowbox_poll_items_total',
      help: 'New poll items that started a run (the baseline of a first poll starts none).',
      registers,
    });
    this.#pollDuration = new Histogram({
      name: 'flowbox_poll_duration_seconds',
      help: 'A poll on its worker: provisioning, the engine and the poll itself.',
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#gaugeOf('flowbox_workers_connected', 'Workers connected to this app.', (s) => s.connectedWorkers());
    this.#gaugeOf('flowbox_workers_busy', 'Workers of this app running a job (a run or a poll).', (s) =>
      s.busyWorkers(),
    );
    this.#gaugeOf('flowbox_workers_waiting', 'Workers of this app waiting for a job (a poll out).', (s) =>
      s.waitingWorkers(),
    );
    this.#gaugeOf(
      'flowbox_sync_callers_waiting',
      'Sync webhook callers this app holds, waiting for their answer.',
      (s) => s.syncCallersWaiting(),
    );
    const sources = () => this.#sources;
    new Gauge({
      name: 'flowbox_cache_entries',
      help: "Entries in each of the app's bounded caches (published_flows, flow_bundles, piece_archives, download_urls).",
      labelNames: ['cache'],
      registers,
      collect() {
        for (const [cache, usage] of Object.entries(sources()?.caches() ?? {}))
          this.set({ cache }, usage.entries);
      },
    });
    new Gauge({
      name: 'flowbox_cache_bytes',
      help: "Bytes in each of the app's caches bounded by size, as the cache counts them (each entry's JSON).",
      labelNames: ['cache'],
      registers,
      collect() {
        for (const [cache, usage] of Object.entries(sources()?.caches() ?? {})) {
          if (usage.bytes !== undefined) this.set({ cache }, usage.bytes);
        }
      },
    });
    new Gauge({
      name: 'flowbox_queue_jobs',
      help: 'Run jobs in the queue (shared by every app), by state; waiting adds the runs this app holds for its workers.',
      labelNames: ['state'],
      registers,
      async collect() {
        const current = sources();
        // A scrape while Redis is down shows no queue figures rather than failing.
        const counts = await current?.queueCounts().catch(() => null);
        if (counts === null || counts === undefined) return;
        for (const [state, value] of Object.entries(counts)) this.set({ state }, value);
      },
    });
  }

  /** Reads queue, worker and caller gauges from these at each scrape (set once the app listens). */
  attach(sources: AppMetricsSources): void {
    this.#sources = sources;
  }

  runAccepted(): void {
    this.#runsAccepted.inc();
  }

  runSubmitted(path: 'handed' | 'queued'): void {
    this.#runsSubmitted.inc({ path });
  }

  /**
   * A run recorded final. `totalMs` (accepted → final, as the run row has it) and the worker's
   * `timings` come with runs a worker reported; a swept or unqueued run has neither.
   */
  runFinished(
    status: FinalRunStatus,
    measured?: { totalMs: number | null; timings?: JobTimings | undefined },
  ): void {
    this.#runsFinished.inc({ status });
    if (measured === undefined) return;
    if (measured.totalMs !== null) this.#runDuration.observe({ status }, measured.totalMs / 1000);
    const { timings } = measured;
    if (timings === undefined) return;
    for (const part of ANATOMY_PARTS) {
      this.#anatomy.observe({ part: part.replace(/Ms$/, '') }, timings[part] / 1000);
    }
  }

  runRecovered(action: 'requeued' | 'worker_lost'): void {
    this.#runsRecovered.inc({ action });
  }

  runPaused(): void {
    this.#runsPaused.inc();
  }

  runResumed(cause: ResumeCause): void {
    this.#runsResumed.inc({ cause });
  }

  /** A resume's dispatch, `lateMs` past its earliest due timer. */
  resumeDispatched(lateMs: number): void {
    this.#resumeLate.observe(Math.max(0, lateMs) / 1000);
  }

  /** A tick this app recorded; `lagMs` from its time to now. */
  scheduleTick(outcome: 'fired' | 'skipped' | 'missed', late: boolean, lagMs: number): void {
    this.#scheduleTicks.inc({ outcome });
    if (late) this.#scheduleLate.inc();
    this.#scheduleLag.observe(Math.max(0, lagMs) / 1000);
  }

  scheduleTicksPassedOver(count: number): void {
    this.#schedulePassedOver.inc(count);
  }

  pollStarted(): void {
    this.#pollsStarted.inc();
  }

  pollEnded(outcome: 'ok' | 'failed' | 'stale', pollMs: number): void {
    this.#polls.inc({ outcome });
    if (pollMs > 0) this.#pollDuration.observe(pollMs / 1000);
  }

  pollItems(count: number): void {
    if (count > 0) this.#pollItems.inc(count);
  }

  retentionDeleted(
    kind: 'run' | 'log' | 'tombstone' | 'refused_delivery' | 'idempotency_key' | 'schedule_tick',
    count: number,
  ): void {
    if (count > 0) this.#retentionDeleted.inc({ kind }, count);
  }

  signatureRefused(scheme: 'hmac-sha256' | 'stripe'): void {
    this.#signatureRefused.inc({ scheme });
  }

  apiKeyRefused(answer: 401 | 429): void {
    this.#apiKeyRefused.inc({ answer: String(answer) });
  }

  metricsTokenRefused(answer: 401 | 429): void {
    this.#metricsTokenRefused.inc({ answer: String(answer) });
  }

  webhookAnswered(statusCode: number): void {
    this.#webhookAnswers.inc({ status: String(statusCode) });
  }

  engineCallback(route: string, statusCode: number): void {
    this.#callbacks.inc({ route, result: String(statusCode) });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #gaugeOf(name: string, help: string, read: (sources: AppMetricsSources) => number): Gauge {
    const sources = () => this.#sources;
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const current = sources();
        this.set(current === null ? 0 : read(current));
      },
    });
  }
}
