import { FlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLL_INTERVAL_SECONDS, lastTickAtOrBefore, parsePollSpec } from './poll-spec.ts';

const floor = { minIntervalSeconds: 60 };
const refusal = (input: Record<string, unknown>): string => {
  try {
    parsePollSpec(input, floor);
  } catch (error) {
    if (error instanceof FlowboxError && error.code === 'INVALID_FLOW') return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('polling trigger input', () => {
  it("defaults to every 300 s from new items, and leaves the piece's own fields alone", () => {
    expect(parsePollSpec({ url: 'https://x.example', keyField: 'id' }, floor)).toEqual({
      intervalSeconds: DEFAULT_POLL_INTERVAL_SECONDS,
      startFrom: 'new',
    });
    expect(parsePollSpec({ intervalSeconds: 60, startFrom: 'all' }, floor)).toEqual({
      intervalSeconds: 60,
      startFrom: 'all',
    });
  });

  it('refuses an interval under the floor, or not a whole number, and an unknown startFrom, naming the field', () => {
    expect(refusal({ intervalSeconds: 59 })).toBe(
      'definition.trigger.input.intervalSeconds: 59 is under the shortest interval allowed, 60 (POLL_MIN_INTERVAL_SECONDS)',
    );
    expect(refusal({ intervalSeconds: 1.5 })).toMatch(/^definition\.trigger\.input\.intervalSeconds: /);
    expect(refusal({ intervalSeconds: '60' })).toMatch(/^definition\.trigger\.input\.intervalSeconds: /);
    expect(refusal({ startFrom: 'oldest' })).toMatch(/^definition\.trigger\.input\.startFrom: /);
  });

  it('ticks at multiples of the interval since the epoch', () => {
    const spec = parsePollSpec({ intervalSeconds: 60 }, floor);
    expect(lastTickAtOrBefore(spec, new Date('2026-11-29T09:00:59.999Z')).toISOString()).toBe(
      '2026-11-29T09:00:00.000Z',
    );
    expect(lastTickAtOrBefore(spec, new Date('2026-11-29T09:01:00.000Z')).toISOString()).toBe(
      '2026-11-29T09:01:00.000Z',
    );
  });
});
