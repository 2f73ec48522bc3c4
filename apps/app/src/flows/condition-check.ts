import { type Condition, findTemplateReferences, type RouterStepDefinition } from '@flowbox/protocol';
import { RE2JS } from 're2js';

/** The longest pattern `matches` takes, as the engine (which runs RE2, linear time, via re2js) bounds it. */
export const MATCHES_PATTERN_MAX_LENGTH = 500;

/** Ops whose two sides must be of one type: a number is never equal to, nor greater than, a string. */
const SAME_TYPE_OPS: ReadonlySet<Condition['op']> = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
/** Ops on text: a string on the left takes a string on the right. */
const TEXT_OPS: ReadonlySet<Condition['op']> = new Set([
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
]);

/** A whole-string template yields its value with its type, known only when the run resolves it. */
const WHOLE_TEMPLATE = /^\{\{[^{}]*\}\}$/;

/** The JSON type a side certainly has, or null when a template decides it at run time. */
function typeOf(side: unknown): string | null {
  if (typeof side === 'string') return WHOLE_TEMPLATE.test(side) ? null : 'string';
  if (side === null) return 'null';
  if (Array.isArray(side)) return 'array';
  return typeof side;
}

/**
 * What is wrong in a router's conditions before it runs (`at` is the router's JSON path): two
 * sides of different types where the op needs one, and `matches` patterns that do not compile
 * or are too long. Sides a template decides are judged when the router runs.
 */
export function conditionProblems(router: RouterStepDefinition, at: string): string[] {
  const problems: string[] = [];
  router.branches.forEach((branch, b) => {
    branch.when.forEach((group, g) => {
      group.forEach((condition, c) => {
        const problem = conditionProblem(condition);
        if (problem !== null) problems.push(`${at}.branches.${b}.when.${g}.${c}: ${problem}`);
      });
    });
  });
  return problems;
}

function conditionProblem({ left, op, right }: Condition): string | null {
  if (op === 'matches') return patternProblem(right);
  const leftType = typeOf(left);
  const rightType = typeOf(right);
  if (leftType === null || rightType === null || leftType === rightType) return null;
  if (SAME_TYPE_OPS.has(op) || (TEXT_OPS.has(op) && leftType === 'string')) {
    return `op '${op}' compares a ${leftType} (${JSON.stringify(left)}) with a ${rightType} (${JSON.stringify(right)}); write both sides as one type`;
  }
  return null;
}

function patternProblem(pattern: unknown): string | null {
  if (typeof pattern !== 'string')
    return `op 'matches' takes a pattern as a string, not ${JSON.stringify(pattern)}`;
  if (findTemplateReferences(pattern).length > 0) return null;
  if (pattern.length > MATCHES_PATTERN_MAX_LENGTH) {
    return `op 'matches' takes a pattern of at most ${MATCHES_PATTERN_MAX_LENGTH} characters (this one has ${pattern.length})`;
  }
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (error) {
    return `op 'matches': the pattern does not compile (RE2 syntax, no backreferences or lookaround): ${(error as Error).message}`;
  }
}
