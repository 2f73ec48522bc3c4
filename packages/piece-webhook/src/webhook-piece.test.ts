import type { ActionContext } from '@flowbox/pieces-framework';
import { createInputValidators } from '@flowbox/pieces-framework/validate';
import type { TriggerPayload } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import piece, { webhookPiece } from './index.ts';

const validators = createInputValidators();
/** As the engine runs a step: the input validated, then the action. */
const returnResponse = {
  async execute(input: unknown, ctx: ActionContext) {
    const action = webhookPiece.actions.get('return_response');
    if (action === undefined) throw new Error('no return_response');
    return action.execute(validators.validate('webhook', action, input, ctx.stepName), ctx);
  },
};

describe('webhook piece', () => {
  it('catch_webhook outputs the whole request', async () => {
    const trigger = webhookPiece.triggers.get('catch_webhook');
    const payload: TriggerPayload = {
      method: 'POST',
      body: { x: 1 },
      rawBody: null,
      rawBodyEncoding: 'utf8',
      headers: { a: 'b' },
      query: {},
    };
    const output = await trigger?.execute(payload, { runId: 'r', stepName: 'trigger', log: () => {} });
    expect(output).toEqual(payload);
  });

  it('return_response sends the response with defaults and returns it', async () => {
    const sent: unknown[] = [];
    const ctx: ActionContext = {
      runId: 'r',
      stepName: 'step_3',
      respond: async (response) => {
        sent.push(response);
      },
      fetch: () => Promise.reject(new Error('no network in this test')),
      log: () => {},
    };
    const output = await returnResponse.execute({ body: { result: 6 } }, ctx);
    const expected = { status: 200, headers: {}, body: { result: 6 } };
    expect(sent).toEqual([expected]);
    expect(output).toEqual(expected);
  });

  it('return_response fails INVALID_RESPONSE, sending nothing, for an interim or impossible status', async () => {
    for (const status of [42, 100, 101, 103, 199, 600, '101']) {
      const { ctx, sent } = recordingContext();
      await expect(returnResponse.execute({ status, body: null }, ctx)).rejects.toMatchObject({
        code: 'INVALID_RESPONSE',
        step: 's',
        message: expect.stringContaining(`status ${Number(status)} is not a final HTTP status`),
      });
      expect(sent).toEqual([]);
    }
  });

  it('return_response fails INVALID_RESPONSE naming the header, for CR/LF in a value or a bad name', async () => {
    const cases = {
      'x-a': 'one\r\nset-cookie: b=1',
      'x-b': 'nul\u0000',
      'bad name': 'v',
      'x-c\r\n': 'v',
      '': 'v',
    };
    for (const [name, value] of Object.entries(cases)) {
      const { ctx, sent } = recordingContext();
      const input = { headers: { ok: 'fine', [name]: value }, body: null };
      await expect(returnResponse.execute(input, ctx)).rejects.toMatchObject({
        code: 'INVALID_RESPONSE',
        message: expect.stringContaining(JSON.stringify(name)),
      });
      expect(sent).toEqual([]);
    }
  });
});

describe('webhook piece', () => {
  it('is the default export, named and versioned by package.json', () => {
    expect(piece).toBe(webhookPiece);
    expect({ name: piece.name, version: piece.version }).toEqual({ name: 'webhook', version: pkg.version });
    expect(pkg.flowbox.piece.name).toBe('webhook');
  });
});

function recordingContext(): { ctx: ActionContext; sent: unknown[] } {
  const sent: unknown[] = [];
  const ctx: ActionContext = {
    runId: 'r',
    stepName: 's',
    respond: async (response) => {
      sent.push(response);
    },
    fetch: () => Promise.reject(new Error('no network in this test')),
    log: () => {},
  };
  return { ctx, sent };
}
