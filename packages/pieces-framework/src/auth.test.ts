import { describe, expect, expectTypeOf, it } from 'vitest';
import { createAction } from './action.ts';
import { PieceAuth } from './auth.ts';
import type { ActionContext } from './context.ts';
import { createPiece } from './piece.ts';
import { Property } from './property.ts';

const ctx = (auth: unknown): ActionContext => ({
  runId: 'run-1',
  stepName: 'step_1',
  respond: async () => {},
  fetch: () => Promise.reject(new Error('no network in this test')),
  log: () => {},
  auth,
});

describe('PieceAuth', () => {
  it('declares secret text, basic auth and custom fields as JSON Schema, required unless said', () => {
    expect(PieceAuth.SecretText({ displayName: 'API key' })).toMatchObject({
      type: 'SECRET_TEXT',
      required: true,
      schema: { type: 'string', minLength: 1 },
    });
    expect(PieceAuth.BasicAuth({ displayName: 'Login', required: false })).toMatchObject({
      type: 'BASIC_AUTH',
      required: false,
      schema: { required: ['username', 'password'] },
    });
    const custom = PieceAuth.CustomAuth({
      displayName: 'Account',
      description: 'the CRM account',
      props: {
        host: Property.ShortText({ displayName: 'Host', required: true }),
        port: Property.Number({ displayName: 'Port' }),
      },
    });
    expect(custom).toMatchObject({
      type: 'CUSTOM_AUTH',
      description: 'the CRM account',
      schema: {
        type: 'object',
        required: ['host'],
        properties: { host: { type: 'string' }, port: { type: 'number' } },
      },
    });
  });

  it("gives run a typed ctx.auth, and publishes the action's or its piece's declaration as JSON", async () => {
    const apiKey = PieceAuth.SecretText({ displayName: 'API key' });
    const login = PieceAuth.BasicAuth({ displayName: 'Login', required: false });
    const call = createAction({
      name: 'call',
      description: '',
      props: {},
      auth: apiKey,
      run: (_input, context) => {
        expectTypeOf(context.auth).toEqualTypeOf<string>();
        return context.auth.length;
      },
    });
    const optional = createAction({
      name: 'optional',
      description: '',
      props: {},
      auth: login,
      run: (_input, context) => {
        expectTypeOf(context.auth).toEqualTypeOf<{ username: string; password: string } | undefined>();
        return context.auth?.username ?? null;
      },
    });
    const plain = createAction({
      name: 'plain',
      description: '',
      props: {},
      run: (_input, context) => context.auth,
    });
    expect(await call.execute({}, ctx('secret'))).toBe(6);
    expect(await optional.execute({}, ctx(undefined))).toBeNull();

    const piece = createPiece({
      name: 'crm',
      version: '1.0.0',
      auth: login,
      actions: [call, optional, plain],
    });
    expect(piece.actions.get('call')?.auth).toMatchObject({ type: 'SECRET_TEXT' });
    expect(piece.actions.get('plain')?.auth).toMatchObject({ type: 'BASIC_AUTH', required: false });
    // As JSON, what the registry stores: no symbol, nothing but the declaration.
    expect(JSON.parse(JSON.stringify(piece.actions.get('call')?.auth))).toEqual({
      type: 'SECRET_TEXT',
      displayName: 'API key',
      required: true,
      schema: { type: 'string', minLength: 1 },
    });
  });
});
