import { CONDITION_OPS, type ConditionOp } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { holds, MATCHES_MAX_PATTERN_LENGTH, whenHolds } from './conditions.ts';

const cases: [ConditionOp, unknown, unknown, boolean][] = [
  ['eq', 5, '5', true],
  ['eq', { a: 1 }, { a: 1 }, true],
  ['eq', 'a', 'b', false],
  ['ne', 'a', 'b', true],
  ['contains', 'hello world', 'lo w', true],
  ['contains', ['a', 2], 2, true],
  ['contains', null, 'x', false],
  ['not_contains', ['a'], 'b', true],
  ['starts_with', 'order-12', 'order-', true],
  ['ends_with', 'file.csv', '.csv', true],
  ['gt', 150, 100, true],
  ['gt', '150', 100, true],
  ['gte', 100, '100', true],
  ['lt', '2026-01-01', '2026-01-02T00:00:00Z', true],
  ['lte', '2026-01-02T10:00:00Z', '2026-01-02T09:00:00Z', false],
  ['exists', 0, undefined, true],
  ['exists', null, undefined, false],
  ['not_exists', undefined, undefined, true],
  ['empty', [], undefined, true],
  ['empty', {}, undefined, true],
  ['empty', 'x', undefined, false],
  ['not_empty', 'x', undefined, true],
  ['true', 'true', undefined, true],
  ['true', 1, undefined, false],
  ['false', false, undefined, true],
  ['matches', 'vip-42', '^vip-\\d+$', true],
  ['matches', 'vip', '^x', false],
];

describe('router conditions', () => {
  it.each(cases)('%s(%j, %j) is %s', (op, left, right, expected) => {
    expect(holds({ left, op, right })).toBe(expected);
  });

  it('covers every op of the protocol', () => {
    expect(new Set(cases.map(([op]) => op))).toEqual(new Set(CONDITION_OPS));
  });

  it('holds when any group holds, each group when all its conditions hold', () => {
    const no = { left: 1, op: 'eq' as const, right: 2 };
    const yes = { left: 1, op: 'eq' as const, right: 1 };
    expect(whenHolds([[yes, no], [yes]])).toBe(true);
    expect(whenHolds([[yes, no], [no]])).toBe(false);
  });

  it('refuses comparing a number with a non-numeric string, naming both', () => {
    expect(() => holds({ left: 7, op: 'gt', right: 'lots' })).toThrow(
      /'gt' compares numbers or ISO dates, not number 7 with the string "lots"/,
    );
  });

  it('matches in linear time: a pattern that backtracks catastrophically elsewhere answers at once', () => {
    // (a+)+$ on 'aaaa…!' takes exponential time in a backtracking engine; RE2 does not backtrack.
    expect(holds({ left: `${'a'.repeat(5_000)}!`, op: 'matches', right: '^(a+)+$' })).toBe(false);
  });

  it('refuses a pattern past its length and one that does not compile', () => {
    const long = 'a'.repeat(MATCHES_MAX_PATTERN_LENGTH + 1);
    expect(() => holds({ left: 'a', op: 'matches', right: long })).toThrow(/at most 500 characters/);
    expect(() => holds({ left: 'a', op: 'matches', right: '(' })).toThrow(/cannot use the pattern/);
    expect(() => holds({ left: 'a', op: 'matches', right: 3 })).toThrow(/takes a pattern string/);
  });
});
