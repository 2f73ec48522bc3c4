import type { StepDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { durableStepProblem } from './durable-step-check.ts';

const DAY = 86_400_000;
const check = (step: Record<string, unknown>) =>
  durableStepProblem(step as StepDefinition, 'definition.steps.0', 30 * DAY);

describe('durableStepProblem', () => {
  it('takes literal durations and dates within RUN_MAX_PAUSE_DAYS, and any template', () => {
    expect(check({ type: 'delay', name: 'd', for: '5s' })).toBeNull();
    expect(check({ type: 'delay', name: 'd', for: 1500 })).toBeNull();
    expect(check({ type: 'delay', name: 'd', for: '{{trigger.body.wait}}' })).toBeNull();
    expect(check({ type: 'delay', name: 'd', until: '2026-12-01T09:00:00Z' })).toBeNull();
    expect(check({ type: 'delay', name: 'd', until: '{{trigger.body.at}}' })).toBeNull();
    expect(check({ type: 'wait', name: 'w', kind: 'request', timeout: '24h' })).toBeNull();
    expect(check({ type: 'flow', name: 'f', flowId: 'x', input: {}, wait: true })).toBeNull();
  });

  it('refuses what is not a duration or a date, and longer than the longest pause', () => {
    expect(check({ type: 'delay', name: 'd', for: 'soon' })).toBe(
      'definition.steps.0.for: "soon" is not a duration (e.g. "500ms", "5s", "24h", "7d", or milliseconds)',
    );
    expect(check({ type: 'delay', name: 'd', for: '31d' })).toBe(
      'definition.steps.0.for: "31d" is longer than RUN_MAX_PAUSE_DAYS (30 days)',
    );
    expect(check({ type: 'delay', name: 'd', until: 'tomorrow' })).toMatch(
      /^definition.steps.0.until: "tomorrow" is not an ISO date/,
    );
    expect(check({ type: 'wait', name: 'w', kind: 'approval', timeout: '1y' })).toMatch(
      /timeout: "1y" is longer than/,
    );
  });
});
