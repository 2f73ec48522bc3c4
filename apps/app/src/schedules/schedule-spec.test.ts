import { FlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { nextTicks, parseScheduleSpec } from './schedule-spec.ts';

const floor = { minIntervalSeconds: 60 };
const refusal = (trigger: string, input: Record<string, unknown>, options = floor): string => {
  try {
    parseScheduleSpec({ trigger, input }, options);
  } catch (error) {
    if (error instanceof FlowboxError && error.code === 'INVALID_FLOW') return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('schedule triggers', () => {
  it('ticks `every` at multiples of the interval since the epoch', () => {
    const spec = parseScheduleSpec({ trigger: 'every', input: { seconds: 60 } }, floor);
    expect(nextTicks(spec, new Date('2026-11-29T09:00:30Z'), 2).map((d) => d.toISOString())).toEqual([
      '2026-11-29T09:01:00.000Z',
      '2026-11-29T09:02:00.000Z',
    ]);
    // Strictly after: a tick is never its own successor.
    expect(spec.nextAfter(new Date('2026-11-29T09:01:00Z'))?.toISOString()).toBe('2026-11-29T09:02:00.000Z');
    expect(spec).toMatchObject({ kind: 'every', catchUp: 'none', overlap: 'allow' });
  });

  it('ticks a cron expression in its time zone, across a DST change', () => {
    const spec = parseScheduleSpec(
      { trigger: 'cron', input: { expression: '0 9 * * 1-5', timezone: 'Europe/Berlin', catchUp: 'last' } },
      floor,
    );
    // Berlin leaves summer time on Sunday 2026-10-25: 09:00 is 07:00Z before, 08:00Z after.
    expect(nextTicks(spec, new Date('2026-10-22T12:00:00Z'), 3).map((d) => d.toISOString())).toEqual([
      '2026-10-23T07:00:00.000Z',
      '2026-10-26T08:00:00.000Z',
      '2026-10-27T08:00:00.000Z',
    ]);
    expect(spec.catchUp).toBe('last');
  });

  it('refuses bad input naming the field', () => {
    expect(refusal('cron', { expression: '61 * * * *' })).toMatch(
      /^definition\.trigger\.input\.expression: /,
    );
    expect(refusal('cron', { expression: '* * * *' })).toMatch(/expression: .* has 4 fields/);
    expect(refusal('cron', { expression: '0 0 0 * * * 2030' })).toMatch(/expression: .* has 7 fields/);
    expect(refusal('cron', { expression: '0 0 31 2 *' })).toMatch(/expression: .* names no time/);
    expect(refusal('cron', { expression: '0 9 * * *', timezone: 'Mars/Olympus' })).toMatch(
      /^definition\.trigger\.input\.timezone: 'Mars\/Olympus' is not an IANA time zone/,
    );
    expect(refusal('every', { seconds: 30 })).toMatch(
      /^definition\.trigger\.input\.seconds: 30 is under the shortest interval allowed, 60 \(SCHEDULE_MIN_INTERVAL_SECONDS\)/,
    );
    expect(refusal('cron', { expression: '*/10 * * * * *' })).toMatch(/expression: .* ticks 10 s apart/);
    expect(refusal('every', { seconds: 60, catchUp: 'all' })).toMatch(/definition\.trigger\.input\.catchUp/);
    expect(refusal('every', { seconds: 60, overlap: 'queue' })).toMatch(
      /definition\.trigger\.input\.overlap/,
    );
    expect(refusal('every', { seconds: 60, extra: 1 })).toMatch(/definition\.trigger\.input/);
    expect(refusal('hourly', {})).toMatch(/^definition\.trigger\.trigger: /);
  });

  it('takes an interval at the floor, and a lowered floor', () => {
    expect(() => parseScheduleSpec({ trigger: 'every', input: { seconds: 60 } }, floor)).not.toThrow();
    expect(() =>
      parseScheduleSpec({ trigger: 'every', input: { seconds: 1 } }, { minIntervalSeconds: 1 }),
    ).not.toThrow();
  });
});
