import { FALLBACK_OPERATOR, parseTemplateExpression } from './template-expression.ts';

/**
 * Step inputs may reference earlier outputs with `{{step_1.result}}` or `{{trigger.body.x}}`:
 * the first segment names the trigger or an earlier step, the rest walks its output (array
 * items by index). A string that is exactly one template yields the value with its type;
 * templates inside longer text are interpolated as text. A path that reads nothing is undefined;
 * `{{ path ?? "default" }}` gives a fallback (template-expression.ts). The app checks references at
 * publish time; the engine resolves them at run time (docs/templates.md).
 */
export const TEMPLATE_PATTERN = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** `{{connections.<name>}}`: the root under which a run's templates read its connections (connections.ts). */
export const CONNECTIONS_ROOT = 'connections';

/**
 * The parts of the webhook request a template reaches on the trigger: `{{trigger.headers.x}}`,
 * `{{trigger.query.x}}`, `{{trigger.method}}`, `{{trigger.rawBody}}`, `{{trigger.body.x}}`. Any
 * other `{{trigger.x}}` reads the body's `x`, and `{{trigger}}` alone the body, so flows written
 * for a trigger that output the body keep working; a body field named like a part is
 * `{{trigger.body.<name>}}`. The fields of flow.ts's TriggerPayloadSchema (templates.test.ts
 * holds them equal), written out so a run's isolate needs no zod.
 */
export const TRIGGER_REQUEST_PARTS: ReadonlySet<string> = new Set([
  'method',
  'headers',
  'query',
  'body',
  'rawBody',
  'rawBodyEncoding',
]);

export interface TemplateReference {
  /** The expression between the braces, trimmed, e.g. `step_1.result` or `trigger.query.page ?? 1`. */
  expression: string;
  /** Its path's first segment: `trigger`, a step name or `connections`. */
  root: string;
  /** Its path's segments, e.g. `['step_1', 'result']` (no fallback). */
  segments: string[];
  /** Where in the input it was found, e.g. `body.items.0`. */
  path: string;
  /** The `?? <literal>` value, when the template has one. */
  fallback?: { value: string | number | boolean | null };
  /** Why the expression is not a template the engine can resolve (the app refuses it at publish). */
  problem?: string;
}

/** Every template in an input value, walking strings, arrays and plain objects. */
export function findTemplateReferences(value: unknown, path = ''): TemplateReference[] {
  if (typeof value === 'string') {
    return [...value.matchAll(TEMPLATE_PATTERN)].map((match) => referenceOf(match[1] ?? '', path));
  }
  const join = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  if (Array.isArray(value)) return value.flatMap((item, index) => findTemplateReferences(item, join(index)));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => findTemplateReferences(item, join(key)));
  }
  return [];
}

function referenceOf(expression: string, path: string): TemplateReference {
  const parsed = parseTemplateExpression(expression);
  if (typeof parsed === 'string') {
    const segments = expression.split(FALLBACK_OPERATOR)[0]?.trim().split('.') ?? [];
    return { expression, root: segments[0] ?? '', segments, path, problem: parsed };
  }
  const reference: TemplateReference = {
    expression,
    root: parsed.segments[0] ?? '',
    segments: parsed.segments,
    path,
  };
  if (parsed.fallback !== undefined) reference.fallback = parsed.fallback;
  return reference;
}
