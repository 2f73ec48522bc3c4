import { envFields } from '@flowbox/node-kit';
import { z } from 'zod';

/** The app's settings for webhooks and the runs they may queue: timeouts, body limits, admission. */
export const webhookEnvFields = {
  WEBHOOK_TIMEOUT_SECONDS: envFields
    .positiveInt(30)
    .describe("How long a sync webhook waits for the flow's response before answering 504 with the run id."),
  IDEMPOTENCY_TTL_HOURS: envFields
    .positiveInt(24)
    .describe(
      "How long a webhook's `Idempotency-Key` holds: within it, a repeat of the key (per flow) gets the first request's run and answer, never a new run. Expired keys are deleted by the retention pass.",
    ),
  WEBHOOK_BODY_LIMIT_BYTES: envFields
    .positiveInt(1_048_576)
    .describe('Largest webhook request body accepted.'),
  WEBHOOK_MAX_QUEUED_RUNS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10_000)
    .describe(
      "Most runs that may wait in the queue to start (a paused run's delayed resume is not counted); past it a webhook is answered 503 (`QUEUE_UNAVAILABLE`, `retry-after: 1`) and creates no run. Bounds the Redis memory of the backlog to about this many triggers. Read from Redis every 250 ms, not per request; with several apps each may pass it by what the others accept in that time. 0: no bound.",
    ),
  WEBHOOK_MAX_DEPTH: envFields
    .positiveInt(64)
    .describe(
      'Deepest nesting of objects and arrays in a webhook body (`{}` at the top is 1); a deeper body is answered 400 (`INVALID_BODY`) and creates no run.',
    ),
  WEBHOOK_RESPONSE_ALLOWED_HEADERS: z
    .string()
    .regex(/^[\w!#$%&'*+.^`|~, -]*$/, 'must be header names, comma-separated')
    .default('')
    .describe(
      "Restricted headers a flow's response may set anyway, comma-separated (e.g. `access-control-allow-origin`). Restricted: `set-cookie`, every `access-control-*` (CORS) and the security headers (`content-security-policy`, `strict-transport-security`, `x-frame-options`, `x-content-type-options`, `clear-site-data`, `cross-origin-*-policy`, `permissions-policy`, `referrer-policy`, `nel`, `report-to`, `reporting-endpoints`, `alt-svc` and the like; the full list is `RESTRICTED_RESPONSE_HEADERS` in `apps/app/src/http/response-header-policy.ts`): a webhook answers on the app's origin, the run inspector's too. A response with one that is not allowed fails its run (`INVALID_RESPONSE`).",
    ),
  FLOW_MAX_QUEUED_RUNS: z.coerce
    .number()
    .int()
    .min(0)
    .default(1_000)
    .describe(
      'Most runs of one flow that may wait to start, counted across every app (Postgres, in the statement that creates the run); past it a webhook of that flow is answered 429 (`FLOW_QUEUE_FULL`, `retry-after: 1`) and creates no run. Apps creating runs of one flow at the same instant may pass it by as many. 0: no bound.',
    ),
  FLOW_MAX_CONCURRENT_RUNS: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      "Most runs of one flow running at once, across every worker; a job of a flow at its cap goes back to the queue for 500 ms and a worker takes another flow's run. Set it below the number of workers so that one flow can never hold them all. With a bound, a worker that polls ahead of its last result gets its next run only once that result is in (a run started early would hold a place under its flow's cap). 0: no bound.",
    ),
};
