import {
  type ErrorResponse,
  type FlowResponse,
  parseTemplateExpression,
  type SerializedError,
  TEMPLATE_PATTERN,
} from '@flowbox/protocol';

/** What an `errorResponse` template reads: `{{error.code}}`, `{{run.id}}` (ERROR_RESPONSE_ROOTS). */
export interface ErrorResponseScope {
  error: { code: string; message: string; step?: string };
  run: { id: string; flowId: string; status: string };
}

export function errorResponseScope(
  run: { id: string; flowId: string; status: string },
  error: SerializedError,
): ErrorResponseScope {
  const shown: ErrorResponseScope['error'] = { code: error.code, message: error.message };
  if (error.step !== undefined) shown.step = error.step;
  return { error: shown, run };
}

/**
 * The flow's own answer to a sync caller of a failed run. Templates follow a step input's:
 * a string that is exactly one template gives the value with its type, templates inside text
 * are interpolated; a path the scope does not hold gives nothing (no value, or '' in text), so
 * a failure without a step still answers. Header values are always text.
 */
export function renderErrorResponse(template: ErrorResponse, scope: ErrorResponseScope): FlowResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(template.headers ?? {})) {
    headers[name] = asText(render(value, scope));
  }
  return { status: template.status, headers, body: render(template.body, scope) };
}

const EXACT = /^\{\{\s*([^{}]*?)\s*\}\}$/;

function render(value: unknown, scope: ErrorResponseScope): unknown {
  if (typeof value === 'string') {
    const exact = EXACT.exec(value);
    if (exact !== null) return lookup(exact[1] ?? '', scope);
    return value.replace(TEMPLATE_PATTERN, (_match, expression: string) => asText(lookup(expression, scope)));
  }
  if (Array.isArray(value)) return value.map((item) => render(item, scope));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, render(item, scope)]));
  }
  return value;
}

/**
 * Own properties only, so `{{error.constructor}}` reaches nothing; `{{ error.step ?? "none" }}`
 * reads its fallback when the path reads nothing. Publish refused expressions that are not one.
 */
function lookup(expression: string, scope: ErrorResponseScope): unknown {
  const parsed = parseTemplateExpression(expression);
  if (typeof parsed === 'string') return undefined;
  let current: unknown = scope;
  for (const segment of parsed.segments) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) {
      current = undefined;
      break;
    }
    current = (current as Record<string, unknown>)[segment];
  }
  if (parsed.fallback !== undefined && (current === undefined || current === null))
    return parsed.fallback.value;
  return current;
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
