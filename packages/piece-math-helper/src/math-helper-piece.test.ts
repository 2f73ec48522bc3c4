import type { ActionContext } from '@flowbox/pieces-framework';
import { createInputValidators } from '@flowbox/pieces-framework/validate';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import piece, { mathHelperPiece } from './index.ts';

const ctx: ActionContext = {
  runId: 'r',
  stepName: 'step_1',
  respond: async () => {},
  fetch: () => Promise.reject(new Error('no network in this test')),
  log: () => {},
};
const addition = mathHelperPiece.actions.get('addition_math');
const validators = createInputValidators();
/** As the engine runs a step: the input validated, then the action. */
const run = async (input: unknown) => {
  if (addition === undefined) throw new Error('no addition_math');
  return addition.execute(validators.validate('math-helper', addition, input, ctx.stepName), ctx);
};

describe('addition_math', () => {
  it('adds numbers', async () => {
    await expect(run({ a: 2, b: 3 })).resolves.toEqual({ result: 5 });
  });

  it('coerces numeric strings', async () => {
    await expect(run({ a: '2', b: '3.5' })).resolves.toEqual({ result: 5.5 });
  });

  it('rejects a non-number naming the field', async () => {
    await expect(run({ a: 'two', b: 3 })).rejects.toMatchObject({
      code: 'INVALID_STEP_INPUT',
      message: expect.stringMatching(/\ba:/),
    });
  });
});

describe('math-helper piece', () => {
  it('is the default export, named and versioned by package.json', () => {
    expect(piece).toBe(mathHelperPiece);
    expect({ name: piece.name, version: piece.version }).toEqual({
      name: 'math-helper',
      version: pkg.version,
    });
    expect(pkg.flowbox.piece.name).toBe('math-helper');
  });
});
