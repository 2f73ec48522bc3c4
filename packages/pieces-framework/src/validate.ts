import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Action } from './action.ts';
import { invalidInput } from './input-error.ts';
import type { JsonSchema } from './property.ts';

/**
 * Checks a step's input against its action's `inputSchema` in the engine's own realm (never in
 * the piece's): coerces text and numbers as templates need, fills defaults, drops unknown fields,
 * and fails with `INVALID_STEP_INPUT` naming each field. One validator per action, compiled on
 * first use; the engine keeps one `InputValidators` per process, keyed by piece version.
 */
export interface InputValidators {
  /** The input `run` gets (a copy: the step's reported input stays as resolved). */
  validate(
    key: string,
    action: Pick<Action, 'name' | 'inputSchema'>,
    input: unknown,
    stepName: string,
  ): unknown;
}

const OPTIONS = {
  coerceTypes: true,
  useDefaults: true,
  removeAdditional: true,
  allErrors: true,
  strict: true,
};

export function createInputValidators(): InputValidators {
  const ajv = new Ajv(OPTIONS);
  const compiled = new Map<string, ValidateFunction>();
  return {
    validate(key, action, input, stepName) {
      const id = `${key}/${action.name}`;
      let check = compiled.get(id);
      if (check === undefined) {
        check = ajv.compile(action.inputSchema);
        compiled.set(id, check);
      }
      // Coercion and defaults write into the value: never into the step's recorded input.
      const copy: unknown = input === undefined || input === null ? {} : structuredClone(input);
      if (!check(copy)) throw invalidInput(action.name, stepName, describe(check.errors ?? []));
      return copy;
    },
  };
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

/**
 * Checks an action's published input schema (the registry, at publish): an object of fields,
 * each in the keywords the builders write, and one the engine's validator compiles. Throws
 * naming the field and what is not supported; nothing else reaches an engine.
 */
export function checkInputSchema(action: string, schema: unknown): void {
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
  for (const [field, fieldSchema] of Object.entries(top.properties as Record<string, unknown>)) {
    if (typeof fieldSchema !== 'object' || fieldSchema === null) fail(`field ${field}: is not a schema`);
    for (const keyword of Object.keys(fieldSchema as object)) {
      if (!FIELD_KEYWORDS.has(keyword)) fail(`field ${field}: '${keyword}' is not supported`);
    }
    const values = (fieldSchema as { additionalProperties?: unknown }).additionalProperties;
    if (values !== undefined && JSON.stringify(values) !== '{"type":"string"}') {
      fail(`field ${field}: only objects of text values are supported`);
    }
  }
  try {
    new Ajv(OPTIONS).compile(schema as JsonSchema);
  } catch (error) {
    fail(`its input schema does not compile: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `a: must be number; name: is required`, as zod's issues read (protocol's formatIssues). */
function describe(errors: readonly ErrorObject[]): string {
  return errors
    .map((error) => {
      const path = error.instancePath.split('/').slice(1).join('.');
      if (error.keyword === 'required') {
        const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
        return `${path === '' ? missing : `${path}.${missing}`}: is required`;
      }
      const allowed = (error.params as { allowedValues?: unknown }).allowedValues;
      const detail = Array.isArray(allowed) ? ` (${allowed.join(', ')})` : '';
      return `${path === '' ? '(root)' : path}: ${error.message ?? 'is invalid'}${detail}`;
    })
    .join('; ');
}
