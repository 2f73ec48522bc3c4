/**
 * Step inputs may reference earlier outputs with `{{step_1.result}}` or `{{trigger.body.x}}`:
 * the first segment names the trigger or an earlier step, the rest walks its output (array
 * items by index). A string that is exactly one template yields the value with its type;
 * templates inside longer text are interpolated as text. The app checks references at
 * publish time; the engine resolves them at run time.
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
  /** The expression between the braces, e.g. `step_1.result`. */
  expression: string;
  /** Its first segment: `trigger` or a step name. */
  root: string;
  /** Where in the input it was found, e.g. `body.items.0`. */
  path: string;
}

/** Every template in an input value, walking strings, arrays and plain objects. */
export function findTemplateReferences(value: unknown, path = ''): TemplateReference[] {
  if (typeof value === 'string') {
    return [...value.matchAll(TEMPLATE_PATTERN)].map((match) => {
      const expression = match[1] ?? '';
      return { expression, root: expression.split('.')[0] ?? '', path };
    });
  }
  const join = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  if (Array.isArray(value)) return value.flatMap((item, index) => findTemplateReferences(item, join(index)));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => findTemplateReferences(item, join(key)));
  }
  return [];
}
