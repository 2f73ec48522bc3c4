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
  z.object({
    scheme: z.literal('hmac-sha256'),
    header: HeaderNameSchema,
    prefix: z.string().max(100).optional(),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    secret: SecretTemplateSchema,
  }),
  z.object({
    scheme: z.literal('stripe'),
    header: HeaderNameSchema.default('stripe-signature'),
    toleranceSeconds: z.number().int().positive().max(86_400).default(300),
    secret: SecretTemplateSchema,
  }),
]);
export type WebhookVerify = z.infer<typeof WebhookVerifySchema>;

export const TriggerDefinitionSchema = z.object({
  name: z.literal('trigger'),
  piece: z.string().min(1),
  version: PieceVersionSchema.optional(),
  trigger: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /** Checked by the app on every webhook of a version that has it; unsigned flows pay nothing. */
  verify: WebhookVerifySchema.optional(),
});

export const PieceStepDefinitionSchema = z.object({
  type: z.literal('piece'),
  name: StepNameSchema,
  piece: z.string().min(1),
  version: PieceVersionSchema.optional(),
  action: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
});

/**
 * A code step: `code` is the body of an async function that receives `inputs` (the step's
 * resolved input) and returns the step's output, e.g. `return { result: inputs.sum + 1 }`.
 */
export const CodeStepDefinitionSchema = z.object({
  type: z.literal('code'),
  name: StepNameSchema,
  code: z.string().min(1).max(100_000),
  input: z.record(z.string(), z.unknown()).default({}),
});

export const StepDefinitionSchema = z.discriminatedUnion('type', [
  PieceStepDefinitionSchema,
  CodeStepDefinitionSchema,
]);

export const FlowDefinitionSchema = z.object({
  trigger: TriggerDefinitionSchema,
  steps: z.array(StepDefinitionSchema).min(1).max(100),
  /**
   * Run a sync run even when its caller left (answered 504, or disconnected) before it started.
   * Off by default: such a run ends FAILED `CALLER_GONE` without running (docs/architecture.md).
   */
  runWhenCallerGone: z.boolean().optional(),
});

export type TriggerDefinition = z.infer<typeof TriggerDefinitionSchema>;
export type PieceStepDefinition = z.infer<typeof PieceStepDefinitionSchema>;
export type CodeStepDefinition = z.infer<typeof CodeStepDefinitionSchema>;
export type StepDefinition = z.infer<typeof StepDefinitionSchema>;
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
});
export type RunLimits = z.infer<typeof RunLimitsSchema>;
