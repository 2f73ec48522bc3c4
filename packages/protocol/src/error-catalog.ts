// The error catalog and class without zod: a run's isolate takes them from here and so holds no
// schema library (errors.ts adds the schemas the processes parse with).
/** How an error crosses a process boundary (IPC, HTTP, Postgres, the run log): errors.ts's schema. */
export interface SerializedError {
  name: string;
  code: ErrorCode;
  message: string;
  stack?: string | undefined;
  /** The step the error happened in, when it happened in a step. */
  step?: string | undefined;
}
/**
 * Error codes in two families: `user` (the flow or its input is wrong; nobody is paged) and
 * `system` (flowbox itself failed; alert). Each code says the one run status a run that ends with
 * it is recorded with (`runStatus`), the HTTP status it is answered with, and `retryable` marks
 * the failures that say nothing about the flow, so another attempt of the run may succeed (its
 * engine or its worker died). Family and run status agree: a user error ends FAILED, a system
 * error INTERNAL_ERROR, and either may end TIMEOUT when what ran out is the run's time.
 */
export const ERROR_CATALOG = {
  // Requests the app rejects before a run exists.
  INVALID_BODY: { family: 'user', runStatus: 'FAILED', httpStatus: 400 },
  INVALID_REQUEST: { family: 'user', runStatus: 'FAILED', httpStatus: 400 },
  FLOW_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** A webhook of a flow whose trigger is a schedule or polls: it starts from ticks or polls (or a manual run), no run is created. */
  FLOW_NOT_WEBHOOK: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  RUN_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** A re-run of a run whose trigger request is gone: retention deleted the run, or it predates kept requests. */
  /** A wait URL called again after it resumed its run (the message names the run). */
  WAIT_ALREADY_RESUMED: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  /** A wait URL whose run has ended (or whose token does not match): nothing to resume. */
  WAIT_ENDED: { family: 'user', runStatus: 'FAILED', httpStatus: 410 },
  /** A rerun `from: "failed"` of a run that did not fail, or whose log is gone. */
  RERUN_NOT_POSSIBLE: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  RUN_TRIGGER_GONE: { family: 'user', runStatus: 'FAILED', httpStatus: 410 },
  ROUTE_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  BODY_TOO_LARGE: { family: 'user', runStatus: 'FAILED', httpStatus: 413 },
  UNSUPPORTED_MEDIA_TYPE: { family: 'user', runStatus: 'FAILED', httpStatus: 415 },
  UNAUTHORIZED: { family: 'user', runStatus: 'FAILED', httpStatus: 401 },
  FORBIDDEN: { family: 'user', runStatus: 'FAILED', httpStatus: 403 },
  /**
   * Too many wrong API keys from one address within API_KEY_FAILURE_WINDOW_SECONDS; answered with
   * `retry-after`. The right key is never refused.
   */
  API_KEY_RATE_LIMITED: { family: 'user', runStatus: 'FAILED', httpStatus: 429 },
  RUN_ALREADY_FINISHED: { family: 'user', runStatus: 'FAILED', httpStatus: 403 },
  INVALID_FLOW: { family: 'user', runStatus: 'FAILED', httpStatus: 400 },
  FLOW_VERSION_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** A step test naming a step the flow version does not have; the message lists the ones it has. */
  STEP_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** A step test of a step that is not a piece or code step (a router, loop, stop, delay, wait, flow). */
  STEP_NOT_TESTABLE: { family: 'user', runStatus: 'FAILED', httpStatus: 400 },
  /** `POST /v1/pieces` of an archive the registry refuses (manifest, tar, size, entry, load). */
  INVALID_PIECE: { family: 'user', runStatus: 'FAILED', httpStatus: 400 },
  /** `POST /v1/pieces` of a name@version already published with other content: versions are immutable. */
  PIECE_VERSION_EXISTS: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  PIECE_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** `POST /v1/pieces` of a built-in piece's name or one in the reserved `flowbox-` namespace. */
  PIECE_NAME_RESERVED: { family: 'user', runStatus: 'FAILED', httpStatus: 403 },
  /** Yanking a piece version published flow versions pin, without `?force`; the message names them. */
  PIECE_IN_USE: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  /** More runs of this flow wait than FLOW_MAX_QUEUED_RUNS: refused before a run is created. */
  FLOW_QUEUE_FULL: { family: 'user', runStatus: 'FAILED', httpStatus: 429 },
  /**
   * The sync caller left (answered 504, or disconnected) before the run started: it is not run
   * for nobody, unless its flow says `runWhenCallerGone`. Nobody gets this answer; 499 is the
   * status proxies log for a client that closed its request.
   */
  CALLER_GONE: { family: 'user', runStatus: 'FAILED', httpStatus: 499 },
  /**
   * A webhook repeating an `Idempotency-Key` of its flow with another body (or on the other of the
   * sync and async routes) within IDEMPOTENCY_TTL_HOURS: no run is created.
   */
  IDEMPOTENCY_KEY_REUSED: { family: 'user', runStatus: 'FAILED', httpStatus: 422 },
  /** A signed flow's webhook whose signature is missing, repeated, stale or wrong: no run is created. */
  WEBHOOK_SIGNATURE_INVALID: { family: 'user', runStatus: 'FAILED', httpStatus: 401 },
  CONNECTION_NOT_FOUND: { family: 'user', runStatus: 'FAILED', httpStatus: 404 },
  /** A connection created under a name that is taken (PUT changes a value). */
  CONNECTION_EXISTS: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  /** Deleting a connection a published flow version references; the message names them. */
  CONNECTION_IN_USE: { family: 'user', runStatus: 'FAILED', httpStatus: 409 },
  // A flow that ran and failed.
  STEP_FAILED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** The run's flow version references a connection deleted since it was published (named). */
  CONNECTION_MISSING: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  INVALID_STEP_INPUT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  TEMPLATE_ERROR: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  CODE_STEP_FAILED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A polling trigger's poll threw, or answered an item without its dedupe key (named): no run, the state stays. */
  POLL_FAILED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** One code step overran its own limit: the step failed, not the run's time. */
  CODE_STEP_TIMEOUT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  CODE_STEP_MEMORY_LIMIT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A piece or code step ran past its own `timeoutMs`: it was stopped and failed. */
  STEP_TIMEOUT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A `stop` step with `status: FAILED` ended the run; the message is the step's. */
  FLOW_STOPPED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A `wait` step (or a waiting sub-flow) reached its `timeout` (or RUN_MAX_PAUSE_DAYS) with no answer. */
  WAIT_TIMEOUT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A delay or wait longer than RUN_MAX_PAUSE_DAYS, or a delay whose `for`/`until` is not a duration or date. */
  INVALID_DELAY: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A `flow` step past SUBFLOW_MAX_DEPTH runs deep: no child run was started. */
  SUBFLOW_TOO_DEEP: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A waiting sub-flow's child run ended without success; the message names the child and its error. */
  SUBFLOW_FAILED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A loop's `items` held more than LOOP_MAX_ITERATIONS items: the loop ran none. */
  LOOP_TOO_MANY_ITERATIONS: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /**
   * RUN_ISOLATION=isolate: a piece of the flow cannot load in a run's isolate (it imports a Node
   * built-in, which only `shared` and `process` provide); the message names the import.
   */
  PIECE_NOT_ISOLATABLE: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** The run took its engine past ENGINE_MEMORY_LIMIT_MB (every execution mode): the engine was killed. */
  ENGINE_MEMORY_LIMIT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /**
   * Runs stored with it: a step whose input or output would not fit in the run's log. An engine
   * leaves such a value out of the log instead (`dropped`), keeping the run's result.
   */
  STEP_OUTPUT_TOO_LARGE: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /**
   * An HTTP request of a run, a code step's `fetch` or a piece's `ctx.fetch` alike, to a host the
   * egress policy (EGRESS) does not allow; the message names the EGRESS value that would allow it.
   */
  EGRESS_DENIED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /**
   * Means EGRESS_DENIED; not produced, and kept so that stored runs and logs that carry it stay
   * readable.
   */
  CODE_STEP_EGRESS_DENIED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A code step's HTTP request failed: unreachable, too large, too many redirects. */
  CODE_STEP_FETCH_FAILED: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** The response step's status or headers cannot be sent (response-rules.ts), or are refused by policy. */
  INVALID_RESPONSE: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /**
   * A code step's `fetch` would take its run past the bytes its requests may hold at once
   * (CODE_STEP_FETCH_MAX_BUFFERED_MB): that request is refused or its response cut off.
   */
  CODE_STEP_FETCH_LIMIT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** A piece's HTTP request (`ctx.fetch`, e.g. the `http` piece) outlasted its own timeout. */
  HTTP_REQUEST_TIMEOUT: { family: 'user', runStatus: 'FAILED', httpStatus: 500 },
  /** The flow outran its timeout (FLOW_TIMEOUT_SECONDS): its worker killed the engine. */
  FLOW_TIMEOUT: { family: 'user', runStatus: 'TIMEOUT', httpStatus: 504 },
  // flowbox failed.
  /** A sync caller's wait ran out (WEBHOOK_TIMEOUT_SECONDS); the run itself goes on. */
  WEBHOOK_TIMEOUT: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 504 },
  /** No worker answered a step test within WEBHOOK_TIMEOUT_SECONDS; nothing was recorded. */
  STEP_TEST_TIMEOUT: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 504 },
  /**
   * The engine process died or could not start. INTERNAL_ERROR, not FAILED: flowbox cannot tell
   * a piece's `process.exit` from the host's OOM killer or a bug of its own, and the run is
   * retried because another attempt may succeed; a flow's own failures have codes of their own.
   */
  ENGINE_CRASHED: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500, retryable: true },
  WORKER_LOST: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500, retryable: true },
  /**
   * The sweeper's: a RUNNING run that nobody reported within its deadline (its worker and the
   * app holding its lease both died). TIMEOUT: what is known is that its time ran out.
   */
  RUN_ABANDONED: { family: 'system', runStatus: 'TIMEOUT', httpStatus: 504 },
  LOG_UPLOAD_FAILED: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500 },
  /**
   * A pausing run's checkpoint could not be uploaded or a resuming run's read: the attempt is
   * retried from the last checkpoint that was written.
   */
  CHECKPOINT_FAILED: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500, retryable: true },
  CALLBACK_FAILED: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500 },
  /** A flow bundle or piece archive could not be fetched or unpacked into the worker's cache. */
  PROVISION_FAILED: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500 },
  /** A fetched artifact's sha256 is not the one the app recorded: refused, never run. */
  ARTIFACT_INTEGRITY: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500 },
  QUEUE_UNAVAILABLE: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 503 },
  /** `POST /v1/pieces` on an app that cannot sandbox a piece's load check (PIECE_LOAD_CHECK). */
  PIECE_CHECK_UNAVAILABLE: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 503 },
  /** The app instance holding a sync caller is shutting down; the run goes on elsewhere. */
  APP_SHUTTING_DOWN: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 503 },
  /** More runs wait than WEBHOOK_MAX_QUEUED_RUNS: refused before a run is created. */
  QUEUE_FULL: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 503 },
  /** More piece publishes are being checked and wait than PIECE_PUBLISH_CONCURRENCY and PIECE_PUBLISH_MAX_QUEUED. */
  PIECE_PUBLISH_BUSY: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 503 },
  INTERNAL: { family: 'system', runStatus: 'INTERNAL_ERROR', httpStatus: 500 },
} as const satisfies Record<string, CatalogEntry>;

/**
 * A catalog row; the union keeps family and run status in agreement (checked by the compiler).
 * The statuses are the final run statuses of run.ts but SUCCEEDED, spelt here so that run.ts,
 * which imports this file, is not imported back.
 */
type CatalogEntry = { httpStatus: number; retryable?: true } & (
  | { family: 'user'; runStatus: 'FAILED' | 'TIMEOUT' }
  | { family: 'system'; runStatus: 'INTERNAL_ERROR' | 'TIMEOUT' }
);

/** The final run statuses an error can give. */
export type ErrorRunStatus = CatalogEntry['runStatus'];

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The run status a run that ends with this error is recorded with: the one place it is decided. */
export function runStatusOf(code: ErrorCode): ErrorRunStatus {
  return ERROR_CATALOG[code].runStatus;
}

/** The HTTP status an error with this code is answered with. */
export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CATALOG[code].httpStatus;
}

/** True for failures that say nothing about the flow: another attempt of the run may succeed. */
export function isRetryable(code: ErrorCode): boolean {
  const entry = ERROR_CATALOG[code];
  return 'retryable' in entry && entry.retryable;
}
/**
 * The one error class that carries a code. `isFlowboxError` checks by shape rather than
 * `instanceof`, so it also works for errors rebuilt from another realm or process.
 */
export class FlowboxError extends Error {
  readonly code: ErrorCode;
  readonly step: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; step?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlowboxError';
    this.code = code;
    this.step = options?.step;
  }

  get httpStatus(): number {
    return httpStatusOf(this.code);
  }

  toJSON(): SerializedError {
    return serializeError(this);
  }
}

export function isFlowboxError(value: unknown): value is FlowboxError {
  if (!(value instanceof Error)) return false;
  const code: unknown = (value as { code?: unknown }).code;
  return typeof code === 'string' && Object.hasOwn(ERROR_CATALOG, code);
}

/** Serialises any thrown value; errors without a known code become `fallback`. */
export function serializeError(error: unknown, fallback: ErrorCode = 'INTERNAL'): SerializedError {
  if (isFlowboxError(error)) {
    const out: SerializedError = { name: error.name, code: error.code, message: error.message };
    if (error.stack !== undefined) out.stack = error.stack;
    if (error.step !== undefined) out.step = error.step;
    return out;
  }
  if (error instanceof Error) {
    const out: SerializedError = { name: error.name, code: fallback, message: error.message };
    if (error.stack !== undefined) out.stack = error.stack;
    return out;
  }
  return { name: 'Error', code: fallback, message: String(error) };
}
