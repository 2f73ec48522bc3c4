import type { ActionContext } from '@flowbox/pieces-framework';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import piece, { webhookPiece } from './index.ts';

describe('webhook piece', () => {
  it('catch_webhook outputs the request body', async () => {
    const trigger = webhookPiece.triggers.get('catch_webhook');
    const payload = { body: { x: 1 }, headers: { a: 'b' }, query: {} };
    const output = await trigger?.execute(payload, { runId: 'r', stepName: 'trigger', log: () => {} });
    expect(output).toEqual({ x: 1 });
  });

  it('return_response sends the response with defaults and returns it', async () => {
    const sent: unknown[] = [];
    const ctx: ActionContext = {
      runId: 'r',
      stepName: 'step_3',
      respond: async (response) => {
        sent.push(response);
      },
      log: () => {},
    };
    const action = webhookPiece.actions.get('return_response');
    const output = await action?.execute({ body: { result: 6 } }, ctx);
    const expected = { status: 200, headers: {}, body: { result: 6 } };
    expect(sent).toEqual([expected]);
    expect(output).toEqual(expected);
  });

  it('return_response rejects a status outside 100..599', async () => {
    const ctx: ActionContext = { runId: 'r', stepName: 's', respond: async () => {}, log: () => {} };
    const action = webhookPiece.actions.get('return_response');
    await expect(action?.execute({ status: 42, body: null }, ctx)).rejects.toMatchObject({
      code: 'INVALID_STEP_INPUT',
    });
  });
});

describe('webhook piece', () => {
  it('is the default export, named and versioned by package.json', () => {
    expect(piece).toBe(webhookPiece);
    expect({ name: piece.name, version: piece.version }).toEqual({ name: 'webhook', version: pkg.version });
    expect(pkg.flowbox.piece.name).toBe('webhook');
  });
});
