import { type Condition, type ConditionOp, FlowboxError } from '@flowbox/protocol';
import { RE2JS } from 're2js';

/** The longest pattern `matches` takes: RE2 runs in linear time, but compiling is not free. */
export const MATCHES_MAX_PATTERN_LENGTH = 500;

/** A condition with its sides resolved (the router resolves templates first). */
export interface ResolvedCondition {
  left: unknown;
  op: ConditionOp;
  right?: unknown;
}

/**
 * Whether `when` holds: any group (OR) whose every condition (AND) holds. Throws
 * INVALID_STEP_INPUT for a comparison that means nothing (a number against a non-numeric
 * string, a bad pattern), naming the condition.
 */
export function whenHolds(when: ResolvedCondition[][]): boolean {
  return when.some((group) => group.every((condition) => holds(condition)));
}

export function holds({ left, op, right }: ResolvedCondition | Condition): boolean {
  switch (op) {
    case 'eq':
      return equals(left, right);
    case 'ne':
      return !equals(left, right);
    case 'contains':
      return contains(left, right);
    case 'not_contains':
      return !contains(left, right);
    case 'starts_with':
      return isText(left) && String(left).startsWith(String(right));
    case 'ends_with':
      return isText(left) && String(left).endsWith(String(right));
    case 'gt':
      return compare(left, right, op) > 0;
    case 'gte':
      return compare(left, right, op) >= 0;
    case 'lt':
      return compare(left, right, op) < 0;
    case 'lte':
      return compare(left, right, op) <= 0;
    case 'exists':
      return left !== undefined && left !== null;
    case 'not_exists':
      return left === undefined || left === null;
    case 'empty':
      return isEmpty(left);
    case 'not_empty':
      return !isEmpty(left);
    case 'true':
      return left === true || left === 'true';
    case 'false':
      return left === false || left === 'false';
    case 'matches':
      return matches(left, right);
  }
}

/** Same value; a number and its numeric string are equal (a query parameter is text). */
function equals(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left === 'number' || typeof right === 'number') {
    const [a, b] = [numberOf(left), numberOf(right)];
    return a !== undefined && a === b;
  }
  if (typeof left === 'object' && left !== null && typeof right === 'object' && right !== null) {
    return JSON.stringify(left) === JSON.stringify(right);
  }
  return false;
}

function contains(left: unknown, right: unknown): boolean {
  if (Array.isArray(left)) return left.some((item) => equals(item, right));
  if (typeof left === 'string') return left.includes(String(right));
  return false;
}

function isText(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number';
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/** Numbers (or numeric strings) by value; ISO dates by time when both sides are dates. */
function compare(left: unknown, right: unknown, op: ConditionOp): number {
  const [leftDate, rightDate] = [dateOf(left), dateOf(right)];
  if (leftDate !== undefined && rightDate !== undefined) return leftDate - rightDate;
  const [a, b] = [numberOf(left), numberOf(right)];
  if (a !== undefined && b !== undefined) return a - b;
  throw new FlowboxError(
    'INVALID_STEP_INPUT',
    `'${op}' compares numbers or ISO dates, not ${describe(left)} with ${describe(right)}`,
  );
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function dateOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !ISO_DATE.test(value)) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

function matches(left: unknown, right: unknown): boolean {
  if (typeof right !== 'string') {
    throw new FlowboxError('INVALID_STEP_INPUT', `'matches' takes a pattern string, not ${describe(right)}`);
  }
  if (right.length > MATCHES_MAX_PATTERN_LENGTH) {
    throw new FlowboxError(
      'INVALID_STEP_INPUT',
      `'matches' takes a pattern of at most ${MATCHES_MAX_PATTERN_LENGTH} characters, not ${right.length}`,
    );
  }
  if (!isText(left)) return false;
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(right);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new FlowboxError(
      'INVALID_STEP_INPUT',
      `'matches' cannot use the pattern ${JSON.stringify(right)}: ${reason}`,
    );
  }
  return pattern.matcher(String(left)).find();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
