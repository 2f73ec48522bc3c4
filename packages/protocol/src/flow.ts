import { z } from 'zod';

/**
 * A piece version a trigger or step pins (`1.2.0`); without one, the latest published version
 * when the flow version is published, which its bundle then pins.
 */
export const PieceVersionSchema = z
  .string()
  .regex(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/, 'must be a semver version');

/** Step names are referenced from templates (`{{step_1.result}}`), so they are identifiers. */
export const StepNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must match [a-z][a-z0-9_]*');

/** A connection's value (or a string field of a JSON value) as the secret a signature is made with. */
const SecretTemplateSchema = z
  .string()
  .regex(
    /^\{\{\s*connections\.[a-z][a-z0-9_]*(\.[A-Za-z0-9_-]+)*\s*\}\}$/,
    'must be one template {{connections.<name>}} (or {{connections.<name>.<field>}})',
  );
/** A header name as node gives it: lower-case. */
const HeaderNameSchema = z
  .string()
  .regex(/^[a-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'must be a lower-case header name');

/**
 * How the app checks that a webhook comes from its sender, on the raw body, before a run exists
 * (docs/guarantees.md). `hmac-sha256`: the header holds HMAC-SHA256(secret, body) in hex or
 * base64 after an optional prefix (GitHub: `x-hub-signature-256`, `sha256=`). `stripe`: the
 * header holds `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` and `t` must be
 * within `toleranceSeconds` of now.
 */
export const WebhookVerifySchema = z.discriminatedUnion('scheme', [
  z.strictObject({
    scheme: z.literal('hmac-sha256'),
    header: HeaderNameSchema,
    prefix: z.string().max(100).optional(),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    secret: SecretTemplateSchema,
  }),
  z.strictObject({
    scheme: z.literal('stripe'),
    header: HeaderNameSchema.default('stripe-signature'),
    toleranceSeconds: z.number().int().positive().max(86_400).default(300),
    secret: SecretTemplateSchema,
  }),
]);
export type WebhookVerify = z.infer<typeof WebhookVerifySchema>;

export const TriggerDefinitionSchema = z.strictObject({
  name: z.literal('trigger'),
  piece: z.string().min(1),
  version: PieceVersionSchema.optional(),
  trigger: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /** Checked by the app on every webhook of a version that has it; unsigned flows pay nothing. */
  verify: WebhookVerifySchema.optional(),
});

/**
 * A duration as people write it: `500ms`, `5s`, `1.5m`, `24h`, `7d` (the `ms` library's forms), or
 * a number of milliseconds. Checked by `durationMs` (durable.ts).
 */
export const DurationSchema = z.union([z.string().min(1).max(100), z.number().int().nonnegative()]);

/**
 * Attempts of a failing piece or code step, each after a backoff: `delayMs × factor^(n-1)`, at
 * most `maxDelayMs`, with `jitter` a random part of it (full jitter). `on`: which failures are
 * retried, by error code (`"STEP_TIMEOUT"`) or HTTP status (`429`, from the `http` piece and
 * `ctx.fetch` errors); absent, every failure. A backoff of at least PAUSE_MIN_MS pauses the run.
 */
export const RetrySchema = z.strictObject({
  maxAttempts: z.number().int().min(1).max(100),
  delayMs: z.number().int().nonnegative().max(86_400_000).default(1_000),
  factor: z.number().min(1).max(10).default(2),
  maxDelayMs: z
    .number()
    .int()
    .nonnegative()
    .max(7 * 86_400_000)
    .default(60_000),
  jitter: z.boolean().default(false),
  on: z
    .array(z.union([z.string().min(1).max(100), z.number().int().min(100).max(599)]))
    .max(50)
    .optional(),
});
export type RetryPolicy = z.infer<typeof RetrySchema>;

/** What piece and code steps may add: how their failure is handled. */
const StepFailureSettings = {
  retry: RetrySchema.optional(),
  /** The step's error becomes its output (`{ error: { code, message } }`) and the run goes on. */
  continueOnFailure: z.boolean().optional(),
  /** Past this the step fails STEP_TIMEOUT and is stopped; at most the flow's timeout. */
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
};

export const PieceStepDefinitionSchema = z.strictObject({
  type: z.literal('piece'),
  name: StepNameSchema,
  piece: z.string().min(1),
  version: PieceVersionSchema.optional(),
  action: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /**
   * The connection whose value the action receives as `ctx.auth`, checked against the credential
   * its piece declares (`auth`); never an input. Named as connections are (connections.ts).
   */
  connection: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a connection name: 1-64 characters of a-z, 0-9 and _')
    .optional(),
  ...StepFailureSettings,
});

/**
 * A code step: `code` is the body of an async function that receives `inputs` (the step's
 * resolved input) and returns the step's output, e.g. `return { result: inputs.sum + 1 }`.
 */
export const CodeStepDefinitionSchema = z.strictObject({
  type: z.literal('code'),
  name: StepNameSchema,
  code: z.string().min(1).max(100_000),
  input: z.record(z.string(), z.unknown()).default({}),
  ...StepFailureSettings,
});

/**
 * A router's comparison operators. Binary: `eq ne contains not_contains starts_with ends_with gt
 * gte lt lte matches` (`gt`..`lte` compare numbers, or ISO dates when both sides are dates);
 * unary (no `right`): `exists not_exists empty not_empty true false`.
 */
export const CONDITION_OPS = [
  'eq',
  'ne',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'not_exists',
  'empty',
  'not_empty',
  'true',
  'false',
  'matches',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
export const UNARY_CONDITION_OPS: ReadonlySet<ConditionOp> = new Set([
  'exists',
  'not_exists',
  'empty',
  'not_empty',
  'true',
  'false',
]);

/** `left` and `right` are literals or templates over what ran before the router. */
export const ConditionSchema = z
  .strictObject({
    left: z.unknown(),
    op: z.enum(CONDITION_OPS),
    right: z.unknown().optional(),
  })
  .superRefine((condition, ctx) => {
    const unary = UNARY_CONDITION_OPS.has(condition.op);
    if (unary && condition.right !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['right'], message: `op '${condition.op}' takes no right side` });
    }
    if (!unary && condition.right === undefined) {
      ctx.addIssue({ code: 'custom', path: ['right'], message: `op '${condition.op}' needs a right side` });
    }
  });
export type Condition = z.infer<typeof ConditionSchema>;

/** A sync caller's answer from a `stop` step (the `webhook/return_response` shape). */
export const StopResponseSchema = z.strictObject({
  status: z.number().int().min(100).max(599).default(200),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
});

/** Ends the run early: SUCCEEDED, or FAILED with `message` as its error (code FLOW_STOPPED). */
export const StopStepDefinitionSchema = z.strictObject({
  type: z.literal('stop'),
  name: StepNameSchema,
  status: z.enum(['SUCCEEDED', 'FAILED']).default('SUCCEEDED'),
  message: z.string().max(1000).optional(),
  response: StopResponseSchema.optional(),
});

/**
 * Waits, then the run goes on: `for` a duration (`"5s"`, or a template that resolves to one) or
 * `until` a time (a template that resolves to an ISO date). Shorter than PAUSE_MIN_MS it sleeps
 * in place; longer, the run pauses (PAUSED) and its worker takes other jobs. Output:
 * `{ scheduledFor, resumedAt, lateMs }`.
 */
export const DelayStepDefinitionSchema = z
  .strictObject({
    type: z.literal('delay'),
    name: StepNameSchema,
    for: DurationSchema.optional(),
    until: z.string().min(1).max(1000).optional(),
  })
  .refine((step) => (step.for === undefined) !== (step.until === undefined), {
    message: 'a delay step needs exactly one of for and until',
  });

/**
 * Pauses the run until a request reaches its resume URL (`{{waits.<name>.resumeUrl}}`, known to
 * the steps before it), or, for `approval`, its approve or reject URL. Output: the request
 * (`{ method, body, query, headers }`), with `approved` for an approval. Past `timeout` the step
 * fails WAIT_TIMEOUT.
 */
export const WaitStepDefinitionSchema = z.strictObject({
  type: z.literal('wait'),
  name: StepNameSchema,
  kind: z.enum(['request', 'approval']).default('request'),
  timeout: DurationSchema.optional(),
  /** A timeout becomes the step's output (`{ error: { code: "WAIT_TIMEOUT", ... } }`) and the run goes on. */
  continueOnFailure: z.boolean().optional(),
});

/**
 * Starts a run of another flow with `input` (templates) as its trigger's body. `wait: true`: the
 * run pauses until the child ends, and the child's response (or its status and error) is the
 * step's output; otherwise the output is `{ runId }` at once.
 */
export const SubflowStepDefinitionSchema = z.strictObject({
  type: z.literal('flow'),
  name: StepNameSchema,
  flowId: z.string().min(1).max(100),
  input: z.record(z.string(), z.unknown()).default({}),
  wait: z.boolean().default(false),
  /** wait: a child that fails (or a timeout) becomes the step's output and the run goes on. */
  continueOnFailure: z.boolean().optional(),
  /** wait: past this the step fails WAIT_TIMEOUT (absent: RUN_MAX_PAUSE_DAYS). */
  timeout: DurationSchema.optional(),
});

export type DelayStepDefinition = z.infer<typeof DelayStepDefinitionSchema>;
export type WaitStepDefinition = z.infer<typeof WaitStepDefinitionSchema>;
export type SubflowStepDefinition = z.infer<typeof SubflowStepDefinitionSchema>;
/** Steps that may pause a run: the interpreter's waiting points. */
export type WaitingStepDefinition = DelayStepDefinition | WaitStepDefinition | SubflowStepDefinition;

export type PieceStepDefinition = z.infer<typeof PieceStepDefinitionSchema>;
export type CodeStepDefinition = z.infer<typeof CodeStepDefinitionSchema>;
export type StopStepDefinition = z.infer<typeof StopStepDefinitionSchema>;
/** A step that runs code of its own (a piece's action or the user's): the interpreter's leaves. */
export type LeafStepDefinition = PieceStepDefinition | CodeStepDefinition;

/** A router's branch: taken when any group of `when` holds (every condition of a group). */
export interface RouterBranch {
  name: string;
  when: Condition[][];
  steps: StepDefinition[];
}

/**
 * Branches in order. `first`: the first branch whose `when` holds runs, else `otherwise`.
 * `all`: every branch whose `when` holds runs (at once with `parallel`), `otherwise` when none.
 * After it, `{{<router>.branch}}` names the branch that ran (`all`: `{{<router>.branches}}`).
 */
export interface RouterStepDefinition {
  type: 'router';
  name: string;
  mode: 'first' | 'all';
  parallel?: boolean | undefined;
  branches: RouterBranch[];
  otherwise?: StepDefinition[] | undefined;
}

/**
 * Runs `steps` once per item of `items` (a template that resolves to an array), `concurrency`
 * at a time. Inside: `{{<loop>.item}}`, `{{<loop>.index}}`; after it: `{{<loop>.iterations}}`,
 * each iteration's step outputs in item order.
 */
export interface LoopStepDefinition {
  type: 'loop';
  name: string;
  items: string | unknown[];
  concurrency: number;
  steps: StepDefinition[];
}

export type StepDefinition =
  | PieceStepDefinition
  | CodeStepDefinition
  | RouterStepDefinition
  | LoopStepDefinition
  | StopStepDefinition
  | DelayStepDefinition
  | WaitStepDefinition
  | SubflowStepDefinition;

/** The most steps a body may hold; the whole flow's bound is a setting checked at publish. */
const MAX_BODY_STEPS = 1_000;
export const LOOP_MAX_CONCURRENCY = 16;

/** A body of steps; a getter refers to it so the schemas may nest (zod's recursive objects). */
const stepsSchema = (min = 0): z.ZodType<StepDefinition[], unknown> =>
  z.array(StepDefinitionSchema).min(min).max(MAX_BODY_STEPS) as z.ZodType<StepDefinition[], unknown>;

export const RouterBranchSchema = z.strictObject({
  name: StepNameSchema,
  when: z.array(z.array(ConditionSchema).min(1).max(50)).min(1).max(50),
  get steps(): z.ZodType<StepDefinition[], unknown> {
    return stepsSchema();
  },
});

export const RouterStepDefinitionSchema = z.strictObject({
  type: z.literal('router'),
  name: StepNameSchema,
  mode: z.enum(['first', 'all']).default('first'),
  parallel: z.boolean().optional(),
  branches: z.array(RouterBranchSchema).min(1).max(32),
  get otherwise(): z.ZodOptional<z.ZodType<StepDefinition[], unknown>> {
    return stepsSchema().optional();
  },
});

export const LoopStepDefinitionSchema = z.strictObject({
  type: z.literal('loop'),
  name: StepNameSchema,
  items: z.union([z.string().min(1), z.array(z.unknown())]),
  concurrency: z.number().int().min(1).max(LOOP_MAX_CONCURRENCY).default(1),
  get steps(): z.ZodType<StepDefinition[], unknown> {
    return stepsSchema(1);
  },
});

/** Named (`FlowStep`) so the OpenAPI document refers to the recursive shape by name. */
export const StepDefinitionSchema: z.ZodType<StepDefinition, unknown> = z
  .discriminatedUnion('type', [
    PieceStepDefinitionSchema,
    CodeStepDefinitionSchema,
    RouterStepDefinitionSchema,
    LoopStepDefinitionSchema,
    StopStepDefinitionSchema,
    DelayStepDefinitionSchema,
    WaitStepDefinitionSchema,
    SubflowStepDefinitionSchema,
  ])
  .meta({
    id: 'FlowStep',
    description: 'A step of a flow: piece, code, router, loop, stop, delay, wait or flow.',
  });

/** The roots an `errorResponse` template may read: `{{error.code}}`, `{{run.id}}`. */
export const ERROR_RESPONSE_ROOTS = ['error', 'run'] as const;

/**
 * A sync caller's answer when its run fails, instead of flowbox's error body. `headers` and
 * `body` may hold templates over the run's error (`{{error.code}}`, `{{error.message}}`,
 * `{{error.step}}`) and the run (`{{run.id}}`, `{{run.status}}`, `{{run.flowId}}`); the run keeps
 * the full error. The `x-flowbox-run-id` header is always sent.
 */
export const ErrorResponseSchema = z.strictObject({
  status: z.number().int().min(100).max(599).default(500),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

export const FlowDefinitionSchema = z.strictObject({
  trigger: TriggerDefinitionSchema,
  steps: stepsSchema(1),
  /**
   * Run a sync run even when its caller left (answered 504, or disconnected) before it started.
   * Off by default: such a run ends FAILED `CALLER_GONE` without running (docs/architecture.md).
   */
  runWhenCallerGone: z.boolean().optional(),
  /** A flow started once with the failed run's id, flow, status, error and step when a run fails. */
  onFailure: z.string().min(1).max(100).optional(),
  /** What a sync caller of a failed run is answered instead of flowbox's error (ErrorResponseSchema). */
  errorResponse: ErrorResponseSchema.optional(),
});

export type TriggerDefinition = z.infer<typeof TriggerDefinitionSchema>;
export type FlowDefinition = z.infer<typeof FlowDefinitionSchema>;

/**
 * What the webhook trigger hands to the flow: the request as the app received it. Kept in the
 * run row (`runs.trigger`) and in the job. `rawBody` is the body as sent, once: the text of a JSON,
 * form or `text/*` body, base64 of any other (whose `body` is then null); '' without a body.
 * `body` is the parsed JSON object, the form's fields (a repeated key: an array of its values),
 * the text, or `{}` without a body (GET). Rows written before method and rawBody existed read
 * as a POST whose raw body is unknown (null).
 */
export const TriggerPayloadSchema = z.object({
  method: z.string().default('POST'),
  /** Lower-cased names; a repeated header's values joined with `, `. */
  headers: z.record(z.string(), z.string()),
  /** A repeated parameter: an array of its values. */
  query: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  body: z.union([z.record(z.string(), z.unknown()), z.string(), z.null()]),
  rawBody: z.string().nullable().default(null),
  /** How `rawBody` is written: base64 for a body that is not JSON, a form or text. */
  rawBodyEncoding: z.enum(['utf8', 'base64']).default('utf8'),
});
export type TriggerPayload = z.infer<typeof TriggerPayloadSchema>;

/** Limits the app sets for every run; the engine and worker enforce them. */
export const RunLimitsSchema = z.object({
  flowTimeoutMs: z.number().int().positive(),
  codeStepTimeoutMs: z.number().int().positive(),
  codeStepMemoryMb: z.number().int().min(8),
  /** The most items one loop may run (LOOP_MAX_ITERATIONS); DEFAULT_LOOP_MAX_ITERATIONS without it. */
  loopMaxIterations: z.number().int().positive().optional(),
  /** A delay or backoff shorter than this sleeps in place; longer, the run pauses (PAUSE_MIN_MS, default 1000). */
  pauseMinMs: z.number().int().nonnegative().optional(),
  /** The longest a run may wait at one step (RUN_MAX_PAUSE_DAYS in ms); default 30 days. */
  maxPauseMs: z.number().int().positive().optional(),
});
export const DEFAULT_PAUSE_MIN_MS = 1_000;
export const DEFAULT_MAX_PAUSE_MS = 30 * 86_400_000;
/** LOOP_MAX_ITERATIONS's default, and the engine's bound for a job that names none. */
export const DEFAULT_LOOP_MAX_ITERATIONS = 1_000;
export type RunLimits = z.infer<typeof RunLimitsSchema>;
