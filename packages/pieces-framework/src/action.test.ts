import { isFlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { createAction } from './action.ts';
import type { ActionContext } from './context.ts';
import { createPiece } from './piece.ts';
import { Property } from './property.ts';
import { createTrigger } from './trigger.ts';
import { createInputValidators } from './validate.ts';

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
    props: {
      n: Property.Number({ displayName: 'N', required: true }),
      by: Property.Number({ displayName: 'By', integer: true, defaultValue: 2 }),
      note: Property.ShortText({ displayName: 'Note' }),
    },
    run: (input) => ({ value: input.n * input.by, note: input.note ?? null }),
  });
  const validators = createInputValidators();
  const run = (input: unknown) =>
    double.execute(validators.validate('p@1', double, input, ctx.stepName), ctx);

  it('publishes its props as one JSON Schema', () => {
    expect(double.inputSchema).toEqual({
      type: 'object',
      properties: {
        n: { type: 'number', title: 'N' },
        by: { type: 'integer', title: 'By', default: 2 },
        note: { type: 'string', title: 'Note' },
      },
      required: ['n'],
      additionalProperties: false,
    });
  });

  it('is validated outside the action: coerced, defaulted, unknown fields dropped', async () => {
    const input = { n: '21', extra: true };
    await expect(run(input)).resolves.toEqual({ value: 42, note: null });
    expect(input).toEqual({ n: '21', extra: true });
  });

  it('rejects bad input with INVALID_STEP_INPUT naming the field and the step', () => {
    const error: unknown = (() => {
      try {
        return validators.validate('p@1', double, { n: 'abc' }, 'step_1');
      } catch (e) {
        return e;
      }
    })();
    expect(isFlowboxError(error)).toBe(true);
    if (!isFlowboxError(error)) return;
    expect(error.code).toBe('INVALID_STEP_INPUT');
    expect(error.step).toBe('step_1');
    expect(error.message).toMatch(/\bn:/);
    expect(() => validators.validate('p@1', double, {}, 'step_1')).toThrow(/invalid input for double: n: /);
  });

  it('refuses an input that is not a Property, naming the field and what it is', () => {
    const zodLike = { _zod: {}, parse: () => null };
    expect(() =>
      createAction({
        name: 'a',
        description: '',
        props: { url: zodLike as never },
        run: () => null,
      }),
    ).toThrow(/action a, field url: a zod schema is not supported/);
  });

  it('refuses the zod `input` form with how to upgrade', () => {
    const definition = { name: 'old', description: '', input: { _zod: {} }, run: () => null };
    expect(() => createAction(definition as never)).toThrow(
      /action old declares its input as a zod schema.*props/,
    );
  });
});

describe('createPiece', () => {
  it('indexes actions and triggers by name', () => {
    const trigger = createTrigger({ name: 't', description: '', run: (payload) => payload.body });
    const action = createAction({ name: 'a', description: '', props: {}, run: () => null });
    const piece = createPiece({ name: 'p', version: '0.1.0', actions: [action], triggers: [trigger] });
    expect(piece.actions.get('a')).toBe(action);
    expect(piece.triggers.get('t')).toBe(trigger);
  });

  it('refuses two actions with one name', () => {
    const action = createAction({ name: 'a', description: '', props: {}, run: () => null });
    expect(() => createPiece({ name: 'p', version: '0.1.0', actions: [action, action] })).toThrow(/twice/);
  });
});
