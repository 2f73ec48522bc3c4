import type { ActionContext } from '@flowbox/pieces-framework';
import { describe, expect, it } from 'vitest';
import { mathHelperPiece } from './index.ts';

const ctx: ActionContext = { runId: 'r', stepName: 'step_1', respond: async () => {}, log: () => {} };
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
