import type { ActionContext } from '@flowbox/pieces-framework';
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

describe('addition_math', () => {
  it('adds numbers', async () => {
    await expect(addition?.execute({ a: 2, b: 3 }, ctx)).resolves.toEqual({ result: 5 });
  });

  it('coerces numeric strings', async () => {
    await expect(addition?.execute({ a: '2', b: '3.5' }, ctx)).resolves.toEqual({ result: 5.5 });
  });

  it('rejects a non-number naming the field', async () => {
    await expect(addition?.execute({ a: 'two', b: 3 }, ctx)).rejects.toMatchObject({
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
