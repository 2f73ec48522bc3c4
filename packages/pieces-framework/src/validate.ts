import { formatIssues } from '@flowbox/protocol';
import { z } from 'zod';
import type { Action } from './action.ts';
import { invalidInput } from './input-error.ts';
import type { JsonSchema } from './property.ts';

/**
 * Checks a step's input against its action's `inputSchema` in the engine's own realm (never in
 * the piece's): coerces text and numbers as templates need, fills defaults, drops unknown fields,
 * and fails with `INVALID_STEP_INPUT` naming each field. The schema is read once per action of a
 * piece version into a zod schema (the engine's zod, already loaded and jitless: a fresh engine
 * compiles no code for it) and kept; the engine keeps one `InputValidators` per process.
 */
export interface InputValidators {
  /** The input `run` gets (a new object: the step's reported input stays as resolved). */
  validate(
    key: string,
    action: Pick<Action, 'name' | 'inputSchema'>,
    input: unknown,
    stepName: string,
  ): unknown;
  /** Reads the schema ahead of the action's first step (a prewarmed engine's preload). */
  prepare(key: string, action: Pick<Action, 'name' | 'inputSchema'>): void;
}

export function createInputValidators(): InputValidators {
  const built = new Map<string, z.ZodType>();
  const schemaOf = (key: string, action: Pick<Action, 'name' | 'inputSchema'>): z.ZodType => {
    const id = `${key}/${action.name}`;
    let schema = built.get(id);
    if (schema === undefined) {
      schema = zodOf(action.inputSchema);
      built.set(id, schema);
    }
    return schema;
  };
  return {
    prepare(key, action) {
      schemaOf(key, action);
    },
    validate(key, action, input, stepName) {
      const schema = schemaOf(key, action);
      const parsed = schema.safeParse(input ?? {});
      if (!parsed.success) throw invalidInput(action.name, stepName, formatIssues(parsed.error.issues));
      return parsed.data;
    },
  };
}

/**
 * What is wrong with a step's input as written, judged as the engine will judge it at run time
 * (the same coercions and defaults) but before any run: for the app, at publish. A field `later`
 * names (its value holds a template, resolved at run time) is neither checked nor required. A
 * field the action does not declare is refused, as its schema says (`additionalProperties:
 * false`), though a run would drop it. One `field: problem` per issue; empty when none.
 */
export function literalInputProblems(
  action: string,
  schema: unknown,
  input: Readonly<Record<string, unknown>>,
  later: (field: string) => boolean,
): string[] {
  // The registry checked it when the piece was published; this narrows it to the builders' shape.
  checkInputSchema(action, schema);
  const written = Object.fromEntries(Object.entries(input).filter(([field]) => !later(field)));
  const problems: string[] = [];
  if (schema.additionalProperties === false) {
    const declared = new Set(Object.keys(schema.properties ?? {}));
    for (const field of Object.keys(input)) {
      if (!declared.has(field)) problems.push(`${field}: the action has no input '${field}'`);
    }
  }
  const parsed = zodOf(schema).safeParse(written);
  if (parsed.success) return problems;
  for (const issue of parsed.error.issues) {
    const field = issue.path[0];
    if (typeof field === 'string' && later(field)) continue;
    problems.push(formatIssues([issue]));
  }
  return problems;
}

/** The keywords `Property`'s builders write: all a published input schema may use. */
const FIELD_KEYWORDS = new Set([
  'type',
  'title',
  'description',
  'default',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'additionalProperties',
]);
const ACTION_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties']);
const FIELD_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);

/**
 * Checks an action's published input schema (the registry, at publish): an object of fields, each
 * in the keywords and types the builders write, with a default that fits its field. Throws naming
 * the field and what is not supported; nothing else reaches an engine.
 */
export function checkInputSchema(action: string, schema: unknown): asserts schema is JsonSchema {
  const fail = (what: string): never => {
    throw new Error(`action ${action}: ${what}`);
  };
  if (typeof schema !== 'object' || schema === null) fail('has no input schema (props)');
  const top = schema as Record<string, unknown>;
  for (const keyword of Object.keys(top)) {
    if (!ACTION_KEYWORDS.has(keyword)) fail(`its input schema's '${keyword}' is not supported`);
  }
  if (top.type !== 'object' || typeof top.properties !== 'object' || top.properties === null) {
    fail('its input schema is not an object of props');
  }
  if (
    top.required !== undefined &&
    !(Array.isArray(top.required) && top.required.every((n) => typeof n === 'string'))
  ) {
    fail("its input schema's 'required' is not a list of field names");
  }
  for (const [field, value] of Object.entries(top.properties as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null) fail(`field ${field}: is not a schema`);
    const fieldSchema = value as Record<string, unknown>;
    for (const keyword of Object.keys(fieldSchema)) {
      if (!FIELD_KEYWORDS.has(keyword)) fail(`field ${field}: '${keyword}' is not supported`);
    }
    const { type } = fieldSchema;
    if (type !== undefined && !(typeof type === 'string' && FIELD_TYPES.has(type))) {
      fail(`field ${field}: type ${JSON.stringify(type)} is not supported`);
    }
    if (fieldSchema.enum !== undefined) {
      const values = fieldSchema.enum;
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
        fail(`field ${field}: 'enum' must list text values`);
      }
    }
    for (const bound of ['minimum', 'maximum', 'minLength', 'maxLength']) {
      if (fieldSchema[bound] !== undefined && typeof fieldSchema[bound] !== 'number') {
        fail(`field ${field}: '${bound}' must be a number`);
      }
    }
    const values = fieldSchema.additionalProperties;
    if (values !== undefined && JSON.stringify(values) !== '{"type":"string"}') {
      fail(`field ${field}: only objects of text values are supported`);
    }
    if (fieldSchema.default !== undefined) {
      const { default: fallback, ...rest } = fieldSchema;
      const fits = fieldOf(rest as JsonSchema).safeParse(fallback);
      if (!fits.success) fail(`field ${field}: its default does not fit: ${formatIssues(fits.error.issues)}`);
    }
  }
}

/** The builders' schema of an action's input as a zod schema (checkInputSchema's keywords only). */
function zodOf(schema: JsonSchema): z.ZodType {
  const required = new Set(schema.required ?? []);
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const base = fieldOf(field);
    const fallback = field.default;
    // A copy per run: an action that changes its default object cannot change the next run's.
    shape[name] =
      fallback !== undefined
        ? base.optional().transform((value) => (value === undefined ? structuredClone(fallback) : value))
        : required.has(name)
          ? base
          : base.optional();
  }
  return z.object(shape);
}

/** Text as templates give it: a number or a boolean is taken as its text. */
const asText = (value: unknown) =>
  typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
const asBoolean = (value: unknown) => (value === 'true' ? true : value === 'false' ? false : value);

function fieldOf(field: JsonSchema): z.ZodType {
  if (Array.isArray(field.enum)) return z.enum(field.enum as [string, ...string[]]);
  switch (field.type) {
    case 'string': {
      let text = z.string();
      if (field.minLength !== undefined) text = text.min(field.minLength);
      if (field.maxLength !== undefined) text = text.max(field.maxLength);
      return z.preprocess(asText, text);
    }
    case 'number':
    case 'integer': {
      let number = field.type === 'integer' ? z.coerce.number().int() : z.coerce.number();
      if (field.minimum !== undefined) number = number.min(field.minimum);
      if (field.maximum !== undefined) number = number.max(field.maximum);
      return number;
    }
    case 'boolean':
      return z.preprocess(asBoolean, z.boolean());
    case 'object':
      return z.record(z.string(), z.preprocess(asText, z.string()));
    case 'array':
      return z.array(z.unknown());
    default:
      return z.unknown();
  }
}
