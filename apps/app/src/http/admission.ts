import type { Logger } from '@flowbox/node-kit';
import { httpStatusOf } from '@flowbox/protocol';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { ErrorBody } from './error-handler.ts';
import { RUN_ID_HEADER } from './webhook-routes.ts';

/** How often the queue's length is read from Redis; between reads, admissions are counted here. */
export const QUEUE_SAMPLE_MS = 250;
/** Logs about refused webhooks are summed over this long, so an overload writes few lines. */
const REFUSAL_LOG_MS = 5_000;

/**
 * Bounds the runs waiting in the queue (WEBHOOK_MAX_QUEUED_RUNS), and with them Redis memory:
 * past the bound a webhook is answered 503 with `retry-after` before its body is read, and no run
 * is created. The check costs no Redis round trip and no Postgres statement: the queue's length
 * is read in the background every QUEUE_SAMPLE_MS, and to the last reading are added the
 * webhooks this instance admitted that it has not answered yet, and those it answered since the
 * reading began (their runs may not be in it). So the bound is never passed by one app: an async
 * webhook is answered after its enqueue, and a sync one counts until it is answered, whether its
 * run still waits or not (erring on the side of the bound). With several apps, each may pass it
 * by what the others admit within one reading. When Redis cannot be read the last reading stays
 * (a webhook then fails at its enqueue with 503, as it would without this).
 */
export class WebhookAdmission {
  readonly #maxQueued: number;
  readonly #countQueued: () => Promise<number>;
  readonly #logger: Logger;
  readonly #sampleMs: number;
  #queued = 0;
  /** Admitted and not answered yet. */
  #inFlight = 0;
  /** Answered, with a run created, since the current reading began. */
  #answeredSince = 0;
  #refused = 0;
  #lastRefusalLog = 0;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;

  constructor(options: {
    /** 0: no bound, nothing is sampled. */
    maxQueuedRuns: number;
    countQueued: () => Promise<number>;
    logger: Logger;
    sampleMs?: number;
  }) {
    this.#maxQueued = options.maxQueuedRuns;
    this.#countQueued = options.countQueued;
    this.#logger = options.logger;
    this.#sampleMs = options.sampleMs ?? QUEUE_SAMPLE_MS;
  }

  get enabled(): boolean {
    return this.#maxQueued > 0;
  }

  /** The runs this instance counts as waiting. */
  get estimate(): number {
    return this.#queued + this.#inFlight + this.#answeredSince;
  }

  /** Takes a first reading, then keeps reading in the background. */
  async start(): Promise<void> {
    if (!this.enabled || this.#timer !== undefined) return;
    await this.refresh();
    this.#timer = setInterval(() => {
      this.#sampling ??= this.refresh().finally(() => {
        this.#sampling = undefined;
      });
    }, this.#sampleMs);
  }

  /** Stops reading. A reading under way is not waited for: Redis may be what hangs. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#logRefusals(true);
  }

  /**
   * True when the webhook may create a run; the caller then reports its answer with `answered`.
   * No I/O.
   */
  tryAdmit(): boolean {
    if (!this.enabled) return true;
    if (this.estimate >= this.#maxQueued) {
      this.#refused += 1;
      this.#logRefusals(false);
      return false;
    }
    this.#inFlight += 1;
    return true;
  }

  /** An admitted webhook was answered (or its client went away), having created a run or not. */
  answered(createdRun: boolean): void {
    if (!this.enabled) return;
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (createdRun) this.#answeredSince += 1;
  }

  refusal(): ErrorBody {
    return {
      error: {
        code: 'QUEUE_FULL',
        message: `the run queue is full (about ${this.estimate} runs waiting, limit ${this.#maxQueued}); no run was created, try again shortly`,
      },
    };
  }

  /** Reads the queue's length now (start() keeps doing it every QUEUE_SAMPLE_MS). */
  async refresh(): Promise<void> {
    // Runs answered before this reading began were enqueued before it: the reading has them.
    const answeredBefore = this.#answeredSince;
    try {
      const queued = await this.#countQueued();
      this.#answeredSince -= answeredBefore;
      this.#queued = queued;
    } catch (error) {
      this.#logger.debug({ err: error }, 'could not read the run queue length');
    }
  }

  #logRefusals(force: boolean): void {
    const now = Date.now();
    if (this.#refused === 0 || (!force && now - this.#lastRefusalLog < REFUSAL_LOG_MS)) return;
    this.#logger.warn(
      { refused: this.#refused, queued: this.estimate, limit: this.#maxQueued },
      'webhooks refused: the run queue is full',
    );
    this.#refused = 0;
    this.#lastRefusalLog = now;
  }
}

/**
 * Puts the admission check in front of every webhook route registered after this call, before
 * the body is read (a refused 2 MiB body costs nothing). The answer is reported on the raw
 * response's `close`, which comes once whether the response was sent or the client went away
 * (fastify's onResponse misses the latter).
 */
export function registerWebhookAdmission(app: FastifyInstance, admission: WebhookAdmission): void {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/webhooks/')) return;
    const admit: onRequestHookHandler = (_request, reply, done) => {
      if (!admission.tryAdmit()) {
        const refusal = admission.refusal();
        void reply.status(httpStatusOf(refusal.error.code)).header('retry-after', '1').send(refusal);
        return;
      }
      // A run counts as queued once enqueued: a 503 with a run id is a run the queue never got
      // (QUEUE_UNAVAILABLE); counted, a long Redis outage would fill the bound with nothing.
      reply.raw.once('close', () =>
        admission.answered(reply.hasHeader(RUN_ID_HEADER) && reply.statusCode !== 503),
      );
      done();
    };
    route.onRequest = [...toArray(route.onRequest), admit];
  });
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
