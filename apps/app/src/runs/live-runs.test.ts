import type { StepResult } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { LiveRuns } from './live-runs.ts';

const step = (name: string): StepResult => ({
  name,
  kind: 'code',
  status: 'SUCCEEDED',
  input: {},
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
});

describe('LiveRuns', () => {
  it("keeps a run's reports until it ends, then refuses more", () => {
    const live = new LiveRuns({ ttlMs: 1_000 });
    expect(live.reportSteps('r', [step('trigger')])).toBe(true);
    expect(live.reportSteps('r', [step('step_1'), step('step_2')])).toBe(true);
    expect(live.reportFinished('r', { status: 'SUCCEEDED', logKey: 'k' }, [step('step_3')])).toBe(true);
    expect(live.get('r')?.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);

    const ended = live.end('r');
    expect(ended).toMatchObject({ finished: { status: 'SUCCEEDED', logKey: 'k' } });
    expect(live.hasEnded('r')).toBe(true);
    expect(live.get('r')).toBeUndefined();
    expect(live.reportSteps('r', [step('late')])).toBe(false);
    expect(live.reportFinished('r', { status: 'FAILED', logKey: null }, [])).toBe(false);
  });

  it('forgets runs after the TTL, in flight and ended alike', () => {
    let now = 0;
    const live = new LiveRuns({ ttlMs: 1_000, now: () => now });
    live.reportSteps('abandoned', [step('trigger')]);
    live.end('done');
    now = 1_000;
    expect(live.hasEnded('done')).toBe(false);
    // Expired entries go as new ones come.
    live.reportSteps('next', [step('trigger')]);
    live.end('next');
    expect(live.size).toEqual({ inFlight: 0, ended: 1 });
  });
});
