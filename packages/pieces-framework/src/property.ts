/**
 * An action's inputs, declared as data: each builder gives a JSON Schema fragment (what the
 * engine validates a step's input with, outside the run's realm, and what the registry shows as
 * the action's form) and carries the TypeScript type `run` receives. No parser runs in the piece.
 */

/** The JSON Schema keywords the builders write (draft 2020-12). */
export interface JsonSchema {
  type?: string | readonly string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  properties?: Readonly<Record<string, JsonSchema>>;
  additionalProperties?: boolean | JsonSchema;
  required?: readonly string[];
  items?: JsonSchema;
}

const PROPERTY = Symbol.for('flowbox.pieces-framework.property');

/**
 * One input of an action. `T` is the value `run` sees; `R` says whether it always has one
 * (`required`, or a `defaultValue`), else it may be `undefined`.
 */
export interface Property<T, R extends boolean> {
  readonly [PROPERTY]: true;
  readonly schema: JsonSchema;
  readonly required: R;
  /** Only the type: never set. */
  readonly _type?: T;
}

export function isProperty(value: unknown): value is Property<unknown, boolean> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PROPERTY] === true;
}

interface Common<T> {
  displayName: string;
  description?: string;
  required?: boolean;
  defaultValue?: T;
}

/** `required: true` or a default: the value is always there. */
type Present<O> = O extends { required: true } ? true : O extends { defaultValue: unknown } ? true : false;

function property<T, O extends Common<T>>(options: O, schema: JsonSchema): Property<T, Present<O>> {
  const full: JsonSchema = { ...schema, title: options.displayName };
  if (options.description !== undefined) full.description = options.description;
  if (options.defaultValue !== undefined) full.default = options.defaultValue;
  const present = options.required === true || options.defaultValue !== undefined;
  return { [PROPERTY]: true, schema: full, required: present as Present<O> };
}

interface TextOptions extends Common<string> {
  minLength?: number;
  maxLength?: number;
}

interface NumberOptions extends Common<number> {
  /** Whole numbers only. */
  integer?: boolean;
  min?: number;
  max?: number;
}

interface DropdownOptions extends Common<string> {
  options: readonly string[];
}

const defined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/**
 * The input kinds. Text and numbers are coerced as templates need (`"{{trigger.n}}"` is text: a
 * number input takes `"42"` as 42; a text input takes 42 as `"42"`); anything else that does not
 * fit fails the step with `INVALID_STEP_INPUT` naming the field.
 */
export const Property = {
  ShortText: <const O extends TextOptions>(options: O) =>
    property<string, O>(
      options,
      defined({ type: 'string', minLength: options.minLength, maxLength: options.maxLength }),
    ),
  LongText: <const O extends TextOptions>(options: O) =>
    property<string, O>(
      options,
      defined({ type: 'string', minLength: options.minLength, maxLength: options.maxLength }),
    ),
  Number: <const O extends NumberOptions>(options: O) =>
    property<number, O>(
      options,
      defined({
        type: options.integer === true ? 'integer' : 'number',
        minimum: options.min,
        maximum: options.max,
      }),
    ),
  Checkbox: <const O extends Common<boolean>>(options: O) =>
    property<boolean, O>(options, { type: 'boolean' }),
  /** One of a fixed list of text values. */
  StaticDropdown: <const O extends DropdownOptions>(options: O) =>
    property<O['options'][number], O>(options, { type: 'string', enum: [...options.options] }),
  /** An object of text values (headers, query parameters): numbers and booleans become text. */
  Object: <const O extends Common<Record<string, string>>>(options: O) =>
    property<Record<string, string>, O>(options, {
      type: 'object',
      additionalProperties: { type: 'string' },
    }),
  /** Any JSON value, unchecked. */
  Json: <const O extends Common<unknown>>(options: O) => property<unknown, O>(options, {}),
  /** A list of any JSON values. */
  Array: <const O extends Common<unknown[]>>(options: O) =>
    property<unknown[], O>(options, { type: 'array' }),
};

/** An action's inputs by name. */
export type Props = Readonly<Record<string, Property<unknown, boolean>>>;

/** The value `run` receives for these inputs. */
export type PropsValue<P extends Props> = {
  [K in keyof P]: P[K] extends Property<infer T, infer R> ? (R extends true ? T : T | undefined) : never;
};

/**
 * The JSON Schema of an action's whole input: an object of its props; unknown fields are
 * dropped. Throws naming the field when a prop is not one of `Property`'s (a zod schema, a
 * function, a hand-made object): such an input cannot be checked outside the piece.
 */
export function inputSchemaOf(action: string, props: unknown): JsonSchema {
  if (typeof props !== 'object' || props === null || Array.isArray(props)) {
    throw new Error(`action ${action}: props must be an object of Property.… inputs`);
  }
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, prop] of Object.entries(props)) {
    if (!isProperty(prop)) {
      const what = isZod(prop) ? 'a zod schema' : typeof prop === 'function' ? 'a function' : 'a plain value';
      throw new Error(
        `action ${action}, field ${name}: ${what} is not supported as an input; declare it with Property.ShortText, Property.Number, … (docs/pieces.md, "Inputs")`,
      );
    }
    properties[name] = prop.schema;
    if (prop.required && prop.schema.default === undefined) required.push(name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** A zod schema, recognised without importing zod (its instances carry `_zod`). */
export function isZod(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '_zod' in value;
}
