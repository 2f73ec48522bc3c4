import type { FlowDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { FLOW_MODES } from '../../test/support/flow-constructs.ts';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { flowOf, withPieces, writeTestPiece } from '../../test/support/isolate-harness.ts';

const h = useExecutorHarness();

const TOKEN = 'sk-live-0123456789abcdef';
const LOGIN = { username: 'service-account', password: 'correct horse battery' };

/** A piece declaring a secret for one action and basic auth (for its others) on the piece. */
const crmPiece = () =>
  writeTestPiece(h.dir, {
    name: 'crm',
    head: 'import{PieceAuth}from"@flowbox/pieces-framework";',
    actions: [
      `createAction({name:"token",description:"",props:{},auth:PieceAuth.SecretText({displayName:"API key"}),run:(input,ctx)=>({length:ctx.auth.length,echo:ctx.auth})})`,
      'createAction({name:"who",description:"",props:{},run:(input,ctx)=>({user:ctx.auth?.username??null,input})})',
    ].join(','),
  }).then(async (piece) => {
    // writeTestPiece's createPiece has no auth: the piece-level declaration is added here.
    const { readFile, writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const file = join(piece.dir, 'index.mjs');
    const source = await readFile(file, 'utf8');
    await writeFile(
      file,
      source.replace(
        'createPiece({',
        'createPiece({auth:PieceAuth.BasicAuth({displayName:"Login",required:false}),',
      ),
    );
    return piece;
  });

const step = (name: string, action: string, connection?: string) => ({
  type: 'piece' as const,
  name,
  piece: 'crm',
  action,
  input: {},
  ...(connection === undefined ? {} : { connection }),
});

describe.each(FLOW_MODES)("a piece step's connection as ctx.auth (%s)", (_mode, mode) => {
  const run = async (flow: FlowDefinition, connections: Record<string, unknown>) => {
    const piece = await crmPiece();
    const job = await h.job(flow, { ...mode, connections: connections as never });
    return (await h.executor.execute({ ...job, ...withPieces(job, piece) })).outcome;
  };

  it("gives the action the connection's value, never as an input, redacted in the run", async () => {
    const outcome = await run(flowOf(step('call', 'token', 'crm_key'), step('me', 'who', 'login')), {
      crm_key: TOKEN,
      login: LOGIN,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.steps[1]).toMatchObject({
      input: {},
      output: { length: TOKEN.length, echo: '[connection:crm_key]' },
    });
    // The piece's declaration applies to the action without one of its own; the username it
    // returns is a field of the connection, so the run shows it redacted too.
    expect(outcome.steps[2]?.output).toEqual({ user: '[connection:login]', input: {} });
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
  });

  it('fails a connection that does not fit the declaration, or a required one not named, naming the step', async () => {
    const wrong = await run(flowOf(step('me', 'who', 'login')), { login: { username: 'x' } });
    expect(wrong.error).toMatchObject({ code: 'INVALID_STEP_INPUT', step: 'me' });
    expect(wrong.error?.message).toMatch(/connection 'login' does not fit Login \(BASIC_AUTH\): password/);
    const missing = await run(flowOf(step('call', 'token')), {});
    expect(missing.error).toMatchObject({ code: 'INVALID_STEP_INPUT', step: 'call' });
    expect(missing.error?.message).toMatch(/token needs a connection \(API key, SECRET_TEXT\)/);
    // Not required: without a connection ctx.auth is undefined.
    const none = await run(flowOf(step('me', 'who')), {});
    expect(none.steps[1]?.output).toEqual({ user: null, input: {} });
  });
});
