/**
 * What may stand between a template's braces: a path, `step_1.items.0`, optionally followed by
 * `?? <literal>`, the value used when the path reads nothing (undefined or null). The literal is
 * a JSON string (`"text"`), a single-quoted string without quotes inside (`'text'`), a number,
 * `true`, `false` or `null`. Shared by the app (checked at publish) and the engine (resolved at
 * run time, also inside a run's isolate): no zod and no regular expressions, which a fresh
 * isolate would compile on every run's first template.
 */

/** Taken at load: a code step in a run's isolate may replace JSON's methods. */
const parseJson = JSON.parse;

export interface TemplateExpression {
  /** The path, e.g. `step_1.items.0`. */
  path: string;
  /** Its segments: the first is the trigger, a step or `connections`. */
  segments: string[];
  /** The fallback after `??`, when there is one. */
  fallback?: { value: string | number | boolean | null };
}

export const FALLBACK_OPERATOR = '??';

/**
 * The expression's parts, or why it is not one (a string to put after `template {{…}}: `).
 * `text` is the trimmed text between the braces.
 */
export function parseTemplateExpression(text: string): TemplateExpression | string {
  const operator = text.indexOf(FALLBACK_OPERATOR);
  const path = operator === -1 ? text : text.slice(0, operator).trim();
  const segments = path.split('.');
  if (path === '') return 'the template is empty';
  for (const segment of segments) {
    if (segment === '') return `the path '${path}' has an empty segment`;
  }
  if (operator === -1) return { path, segments };
  const literal = text.slice(operator + FALLBACK_OPERATOR.length).trim();
  const fallback = parseLiteral(literal);
  if (fallback === undefined) {
    return `the fallback ${literal === '' ? '(nothing)' : literal} is not a string ("text" or 'text'), number, true, false or null`;
  }
  return { path, segments, fallback: { value: fallback } };
}

/** A literal's value, or undefined when the text is not one. */
function parseLiteral(text: string): string | number | boolean | null | undefined {
  if (text === 'null') return null;
  if (text === 'true') return true;
  if (text === 'false') return false;
  const first = text.charCodeAt(0);
  if (first === DOUBLE_QUOTE) {
    try {
      const value: unknown = parseJson(text);
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }
  if (first === SINGLE_QUOTE) {
    const inner = text.slice(1, -1);
    return text.length >= 2 && text.endsWith("'") && !inner.includes("'") ? inner : undefined;
  }
  return isNumber(text) ? Number(text) : undefined;
}

const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/** A number as JSON writes one (`-1`, `2.5`, `1e3`); not `0x10`, `+1`, `Infinity` or ``. */
function isNumber(text: string): boolean {
  const first = text.charCodeAt(0);
  if (first !== MINUS && (first < DIGIT_0 || first > DIGIT_9)) return false;
  try {
    return typeof parseJson(text) === 'number';
  } catch {
    return false;
  }
}

const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
