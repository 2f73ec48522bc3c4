import { isFlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAction } from './action.ts';
import type { ActionContext } from './context.ts';
import { createPiece } from './piece.ts';
import { createTrigger } from './trigger.ts';

const ctx: ActionContext = {
  runId: 'run-1',
  stepName: 'step_1',
  respond: async () => {},
  fetch: () => Promise.reject(new Error('no network in this test')),
  log: () => {},
};

describe('createAction', () => {
  const double = createAction({
    name: 'double',
    description: 'doubles n',
    input: z.object({ n: z.coerce.number() }),
    run: (input) => ({ value: input.n * 2 }),
  });

  it('validates and coerces the input before running', async () => {
    await expect(double.execute({ n: '21' }, ctx)).resolves.toEqual({ value: 42 });
  });

  it('rejects bad input with INVALID_STEP_INPUT naming the field and the step', async () => {
    const error: unknown = await double.execute({ n: 'abc' }, ctx).catch((e: unknown) => e);
    expect(isFlowboxError(error)).toBe(true);
    if (!isFlowboxError(error)) return;
    expect(error.code).toBe('INVALID_STEP_INPUT');
    expect(error.step).toBe('step_1');
    expect(error.message).toMatch(/\bn:/);
  });
});

describe('createPiece', () => {
  it('indexes actions and triggers by name', () => {
    const trigger = createTrigger({ name: 't', description: '', run: (payload) => payload.body });
    const action = createAction({ name: 'a', description: '', input: z.object({}), run: () => null });
    const piece = createPiece({ name: 'p', version: '0.1.0', actions: [action], triggers: [trigger] });
    expect(piece.actions.get('a')).toBe(action);
    expect(piece.triggers.get('t')).toBe(trigger);
  });

  it('refuses two actions with one name', () => {
    const action = createAction({ name: 'a', description: '', input: z.object({}), run: () => null });
    expect(() => createPiece({ name: 'p', version: '0.1.0', actions: [action, action] })).toThrow(/twice/);
  });
});
