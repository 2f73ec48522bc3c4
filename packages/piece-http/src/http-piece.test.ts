import type { ActionContext, PieceHttpRequest, PieceHttpResponse } from '@flowbox/pieces-framework';
import { createInputValidators } from '@flowbox/pieces-framework/validate';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import piece, { httpPiece } from './index.ts';

const action = httpPiece.actions.get('send_request');
const validators = createInputValidators();
/** As the engine runs a step: the input validated, then the action. */
const send = {
  async execute(input: unknown, ctx: ActionContext) {
    if (action === undefined) throw new Error('no send_request');
    return action.execute(validators.validate('http', action, input, ctx.stepName), ctx);
  },
};

/** A context whose `fetch` records the request and answers with `answer`. */
function answering(answer: Partial<PieceHttpResponse>) {
  const requests: PieceHttpRequest[] = [];
  const ctx: ActionContext = {
    runId: 'r',
    stepName: 'call',
    respond: async () => {},
    fetch: async (request) => {
      requests.push(request);
      return { status: 200, headers: {}, body: '', url: request.url, ...answer };
    },
    log: () => {},
  };
  return { ctx, requests };
}

describe('send_request', () => {
  it('sends a JSON body with the query added to the URL and parses a JSON answer', async () => {
    const { ctx, requests } = answering({
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
    });
    const output = await send.execute(
      {
        method: 'POST',
        url: 'http://api.example.com/items?a=1',
        query: { b: 2, c: 'x y' },
        headers: { authorization: 'Bearer t' },
        body: { name: 'n' },
        timeoutMs: '5000',
      },
      ctx,
    );
    expect(output).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: { ok: true },
    });
    expect(requests).toEqual([
      {
        url: 'http://api.example.com/items?a=1&b=2&c=x+y',
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: '{"name":"n"}',
        timeoutMs: 5000,
        responseEncoding: 'text',
      },
    ]);
  });

  it('sends a form and text bodies, keeping a content-type the flow set', async () => {
    const form = answering({ body: 'done' });
    await send.execute(
      {
        method: 'POST',
        url: 'https://e.example/f',
        bodyType: 'form',
        body: { a: 'x&y', n: 3 },
        responseType: 'text',
      },
      form.ctx,
    );
    expect(form.requests[0]).toMatchObject({
      body: 'a=x%26y&n=3',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const text = answering({ body: 'done' });
    const output = await send.execute(
      {
        method: 'PUT',
        url: 'https://e.example/t',
        headers: { 'Content-Type': 'text/csv' },
        bodyType: 'text',
        body: 'a,b',
        responseType: 'text',
      },
      text.ctx,
    );
    expect(text.requests[0]).toMatchObject({ body: 'a,b', headers: { 'Content-Type': 'text/csv' } });
    expect(output).toMatchObject({ body: 'done' });
  });

  it('asks for base64 and hands it back as it came; a GET has no body', async () => {
    const { ctx, requests } = answering({ body: 'AAEC/w==' });
    const output = await send.execute({ url: 'https://e.example/logo.png', responseType: 'base64' }, ctx);
    expect(output).toMatchObject({ body: 'AAEC/w==' });
    expect(requests[0]).toMatchObject({ method: 'GET', responseEncoding: 'base64', timeoutMs: 30_000 });
    expect(requests[0]?.body).toBeUndefined();
  });

  it('answers any status, and an empty JSON answer is null', async () => {
    const { ctx } = answering({ status: 404, body: '' });
    await expect(send.execute({ url: 'https://e.example/' }, ctx)).resolves.toMatchObject({
      status: 404,
      body: null,
    });
  });

  it('fails a JSON answer that is not JSON, naming the response type to use', async () => {
    const { ctx } = answering({ body: '<html>' });
    await expect(send.execute({ url: 'https://e.example/' }, ctx)).rejects.toThrow(/not JSON.*responseType/);
  });

  it('refuses bad input before sending anything', async () => {
    const { ctx, requests } = answering({});
    for (const input of [
      { url: 'file:///etc/passwd' },
      { url: 'not a url' },
      { url: 'https://e.example/', method: 'BREW' },
      { url: 'https://e.example/', bodyType: 'text', body: { a: 1 } },
      { url: 'https://e.example/', bodyType: 'form', body: 'a=1' },
      { url: 'https://e.example/', timeoutMs: 0 },
    ]) {
      await expect(send.execute(input, ctx), JSON.stringify(input)).rejects.toMatchObject({
        code: 'INVALID_STEP_INPUT',
      });
    }
    expect(requests).toEqual([]);
  });
});

describe('http piece', () => {
  it('is the default export, named and versioned by package.json', () => {
    expect(piece).toBe(httpPiece);
    expect({ name: piece.name, version: piece.version }).toEqual({ name: 'http', version: pkg.version });
  });
});
