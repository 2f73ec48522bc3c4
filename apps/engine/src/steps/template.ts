import { FlowboxError, TRIGGER_REQUEST_PARTS } from '@flowbox/protocol';

/** Earlier outputs a step's input may reference: `{ trigger: ..., step_1: ..., ... }`. */
export type TemplateScope = Readonly<Record<string, unknown>>;

/**
 * Resolves `{{step.path}}` templates in a step's input, recursively through arrays and
 * objects. A string that is exactly one template yields the referenced value with its type;
 * templates inside a longer string are interpolated as text (objects as JSON).
 */
export function resolveTemplates(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) return value.map((item) => resolveTemplates(item, scope));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveTemplates(item, scope)]),
    );
  }
  return value;
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

/** Follows `step.a.b` (array items by index: `step.items.0`) through own properties only. */
function lookup(expression: string, scope: TemplateScope): unknown {
  const segments = expression.split('.');
  const [root, ...path] = segments;
  if (root === undefined || root === '' || segments.some((segment) => segment === '')) {
    throw new FlowboxError('TEMPLATE_ERROR', `invalid template {{${expression}}}`);
  }
  // Own properties only, so `{{step_1.constructor}}` cannot reach prototypes.
  if (!Object.hasOwn(scope, root)) {
    throw new FlowboxError('TEMPLATE_ERROR', `template {{${expression}}} references unknown step '${root}'`);
  }
  let current: unknown = scope[root];
  let walked = root;
  if (root === TRIGGER_STEP && isWebhookRequest(current) && !TRIGGER_REQUEST_PARTS.has(path[0] ?? '')) {
    // Flows written when the trigger's output was the body keep reading the body.
    current = current.body;
    walked = `${root}.body`;
  }
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) {
      throw new FlowboxError(
        'TEMPLATE_ERROR',
        `template {{${expression}}}: '${walked}' has no property '${segment}'`,
      );
    }
    current = (current as Record<string, unknown>)[segment];
    walked = `${walked}.${segment}`;
  }
  return current;
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
