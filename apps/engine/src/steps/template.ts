import {
  CONNECTIONS_ROOT,
  FlowboxError,
  parseTemplateExpression,
  TRIGGER_REQUEST_PARTS,
} from '@flowbox/protocol';

/** Earlier outputs a step's input may reference: `{ trigger: ..., step_1: ..., ... }`. */
export type TemplateScope = Readonly<Record<string, unknown>>;

/**
 * Resolves `{{step.path}}` templates in a step's input, recursively through arrays and
 * objects. A string that is exactly one template yields the referenced value with its type;
 * templates inside a longer string are interpolated as text (objects as JSON). A path that
 * reads nothing (a missing field, a step that did not run) is undefined: a whole-value template
 * then leaves its object field out (so a piece's default or required-field check applies) and an
 * array item undefined, and inside text it is empty. `{{ path ?? "x" }}` reads `"x"` when the
 * path is undefined or null. An invalid expression, or a connection the run was not given, is a
 * TEMPLATE_ERROR naming `step`, the field (under `root`: a leaf's `input`, a router's `when`, a
 * loop's `items`; '' for none) and the template (docs/templates.md).
 */
export function resolveTemplates(
  value: unknown,
  scope: TemplateScope,
  step?: string,
  root = 'input',
): unknown {
  try {
    return resolveValue(value, scope);
  } catch (error) {
    if (error instanceof TemplateProblem) throw error.located(step, root);
    throw error;
  }
}

function resolveValue(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) {
    return value.map((item, index) => {
      try {
        return resolveValue(item, scope);
      } catch (error) {
        throw within(error, index);
      }
    });
  }
  if (isPlainObject(value)) {
    const entries: [string, unknown][] = [];
    for (const key of Object.keys(value)) {
      let item: unknown;
      try {
        item = resolveValue(value[key], scope);
      } catch (error) {
        throw within(error, key);
      }
      // Absent, not undefined: a piece's defaults and required fields see the field as not given.
      if (item !== undefined) entries.push([key, item]);
    }
    // fromEntries, not assignment: a `__proto__` key stays a field.
    return Object.fromEntries(entries);
  }
  return value;
}

/** A template that cannot be resolved, with the input field it is in (filled in as it unwinds). */
class TemplateProblem extends Error {
  readonly field: (string | number)[] = [];
  readonly expression: string;
  readonly reason: string;

  constructor(expression: string, reason: string) {
    super(reason);
    this.expression = expression;
    this.reason = reason;
  }

  located(step: string | undefined, root: string): FlowboxError {
    const field = (root === '' ? this.field : [root, ...this.field]).join('.');
    const where = step === undefined ? field : `step '${step}', ${field}`;
    return new FlowboxError('TEMPLATE_ERROR', `${where}: template {{${this.expression}}}: ${this.reason}`);
  }
}

function within(error: unknown, key: string | number): unknown {
  if (error instanceof TemplateProblem) error.field.unshift(key);
  return error;
}

function resolveString(text: string, scope: TemplateScope): unknown {
  let at = text.indexOf('{{');
  if (at === -1) return text;
  const first = at === 0 ? templateAt(text, 0) : null;
  if (first !== null && first.end === text.length) return lookup(first.expression, scope);
  let resolved = '';
  let copied = 0;
  while (at !== -1) {
    const template = templateAt(text, at);
    if (template === null) {
      at = text.indexOf('{{', at + 1);
      continue;
    }
    resolved += text.slice(copied, at) + asText(lookup(template.expression, scope));
    copied = template.end;
    at = text.indexOf('{{', copied);
  }
  return resolved + text.slice(copied);
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * The template that starts at `start` (where `{{` is): `{{`, text without braces, `}}`; its
 * expression is that text trimmed. Scanned by hand rather than by a regular expression: V8
 * compiles a RegExp on its first use in each process, and a startup snapshot does not keep it,
 * so every fresh engine's first run would pay for compiling them (measure-boot.ts shows it).
 */
function templateAt(text: string, start: number): { expression: string; end: number } | null {
  for (let index = start + 2; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === OPEN_BRACE) return null;
    if (char === CLOSE_BRACE) {
      if (text.charCodeAt(index + 1) !== CLOSE_BRACE) return null;
      return { expression: text.slice(start + 2, index).trim(), end: index + 2 };
    }
  }
  return null;
}

/** The expression's value: its path's, or its fallback's when that is undefined or null. */
function lookup(expression: string, scope: TemplateScope): unknown {
  const parsed = parseTemplateExpression(expression);
  if (typeof parsed === 'string') throw new TemplateProblem(expression, parsed);
  const value = read(parsed.segments, scope, expression);
  if (parsed.fallback !== undefined && (value === undefined || value === null)) return parsed.fallback.value;
  return value;
}

/**
 * Follows `step.a.b` (array items by index: `step.items.0`) through own properties only;
 * undefined where a segment is missing.
 */
function read(segments: string[], scope: TemplateScope, expression: string): unknown {
  const root = segments[0] ?? '';
  // Own properties only, so `{{step_1.constructor}}` cannot reach prototypes.
  if (!Object.hasOwn(scope, root)) {
    if (root === CONNECTIONS_ROOT) throw notGiven(segments, expression);
    return undefined;
  }
  let current: unknown = scope[root];
  let index = 1;
  if (root === CONNECTIONS_ROOT) {
    // A secret silently empty would be sent as such: a connection the run lacks is an error.
    const name = segments[1] ?? '';
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, name)) {
      throw notGiven(segments, expression);
    }
  } else if (
    root === TRIGGER_STEP &&
    isWebhookRequest(current) &&
    !TRIGGER_REQUEST_PARTS.has(segments[1] ?? '')
  ) {
    // Flows written when the trigger's output was the body keep reading the body.
    current = current.body;
  }
  for (; index < segments.length; index += 1) {
    const segment = segments[index] ?? '';
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function notGiven(segments: string[], expression: string): TemplateProblem {
  return new TemplateProblem(expression, `the run has no connection '${segments[1] ?? ''}'`);
}

/** The trigger step's name (TriggerDefinitionSchema): its output is the webhook request. */
const TRIGGER_STEP = 'trigger';

/** The webhook trigger's output (piece webhook 0.2.0 on); older versions output the body alone. */
function isWebhookRequest(value: unknown): value is { body: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.hasOwn(value, 'body') &&
    Object.hasOwn(value, 'rawBody') &&
    Object.hasOwn(value, 'method')
  );
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
