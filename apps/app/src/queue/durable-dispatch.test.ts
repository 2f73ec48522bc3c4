import { createHmac } from 'node:crypto';
import { FlowDefinitionSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { checkpointKeys, pauseTraits, waitUrlKey, waitUrlSecret } from './durable-dispatch.ts';

const trigger = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };
const code = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'code',
  name,
  code: 'return 1',
  input: {},
  ...extra,
});
const flow = (steps: unknown[]) => FlowDefinitionSchema.parse({ trigger, steps });
const inLoop = (step: unknown) => ({
  type: 'loop',
  name: 'each',
  items: '{{trigger.body.items}}',
  steps: [step],
});

describe('which flow versions can pause', () => {
  it('finds delay, wait, flow and retry steps wherever they sit in the tree', () => {
    expect(pauseTraits(flow([code('a')]))).toEqual({ canPause: false, hasWaits: false });
    expect(pauseTraits(flow([code('a'), inLoop({ type: 'delay', name: 'later', for: '5s' })]))).toEqual({
      canPause: true,
      hasWaits: false,
    });
    expect(pauseTraits(flow([inLoop({ type: 'wait', name: 'ok', kind: 'approval' })]))).toEqual({
      canPause: true,
      hasWaits: true,
    });
    expect(pauseTraits(flow([{ type: 'flow', name: 'child', flowId: 'other', wait: true }]))).toEqual({
      canPause: true,
      hasWaits: false,
    });
    expect(
      pauseTraits(flow([code('a', { retry: { maxAttempts: 3, delayMs: 1000, factor: 2 } })])).canPause,
    ).toBe(true);
  });
});

describe('wait URL keys', () => {
  it('are HMAC-SHA256 of the run id under WAIT_URL_SECRET, or under one derived from TOKEN_SECRET', () => {
    const secret = 'w'.repeat(32);
    expect(waitUrlKey(secret, 'run-1')).toBe(
      createHmac('sha256', secret).update('run-1').digest('base64url'),
    );
    expect(waitUrlKey(secret, 'run-1')).not.toBe(waitUrlKey(secret, 'run-2'));
    expect(waitUrlSecret({ WAIT_URL_SECRET: secret, TOKEN_SECRET: 't'.repeat(32) })).toBe(secret);
    const derived = waitUrlSecret({ TOKEN_SECRET: 't'.repeat(32) });
    expect(derived).not.toBe('t'.repeat(32));
    expect(derived.length).toBeGreaterThanOrEqual(32);
  });

  it('name every checkpoint a run may have written', () => {
    expect(checkpointKeys('r', 2)).toEqual([
      'checkpoints/r/0.json',
      'checkpoints/r/1.json',
      'checkpoints/r/2.json',
    ]);
  });
});
