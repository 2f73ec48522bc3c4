import { createLogger } from '@flowbox/node-kit';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installErrorHandler } from './error-handler.ts';
import { inspectJson, installJsonBodyParser, parseJsonBody } from './json-body.ts';

const nested = (depth: number): unknown =>
  JSON.parse(`${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`);

describe('inspectJson', () => {
  it('finds nothing in plain bodies, whatever their keys', () => {
    expect(inspectJson({ a: [1, { b: null }], constructor: 'x', prototype: {} })).toBeNull();
    expect(inspectJson({ constructor: { name: 'x' } })).toBeNull();
    expect(inspectJson('text')).toBeNull();
    expect(inspectJson(null)).toBeNull();
  });

  it('finds __proto__ and constructor.prototype keys at any depth, with their path', () => {
    expect(inspectJson(JSON.parse('{"__proto__":{"admin":true}}'))).toEqual({
      kind: 'prototype-key',
      key: '__proto__',
      path: 'body.__proto__',
    });
    expect(inspectJson(JSON.parse('{"a":[{"b c":{"__proto__":1}}]}'))).toMatchObject({
      key: '__proto__',
      path: 'body.a[0]["b c"].__proto__',
    });
    expect(inspectJson(JSON.parse('{"x":{"constructor":{"prototype":{"y":1}}}}'))).toEqual({
      kind: 'prototype-key',
      key: 'constructor',
      path: 'body.x.constructor',
    });
  });

  it('counts the top object as depth 1 and refuses past the limit', () => {
    expect(inspectJson({}, 1)).toBeNull();
    expect(inspectJson({ a: 1 }, 1)).toBeNull();
    expect(inspectJson({ a: {} }, 1)).toEqual({ kind: 'too-deep', path: 'body.a' });
    expect(inspectJson(nested(64), 64)).toBeNull();
    expect(inspectJson(nested(65), 64)).toMatchObject({ kind: 'too-deep' });
    expect(inspectJson([[[[]]]], 3)).toEqual({ kind: 'too-deep', path: 'body[0][0][0]' });
  });

  it('walks 100,000 levels without overflowing the stack, and shortens the path', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(inspectJson(deep)).toBeNull();
    const finding = inspectJson(deep, 64);
    expect(finding).toEqual({ kind: 'too-deep', path: `body…${'[0]'.repeat(8)}` });
    const poisoned = JSON.parse(`${'{"a":'.repeat(50_000)}{"__proto__":1}${'}'.repeat(50_000)}`);
    expect(inspectJson(poisoned)).toEqual({
      kind: 'prototype-key',
      key: '__proto__',
      path: `body…${'.a'.repeat(7)}.__proto__`,
    });
  });
});

describe('the JSON body parser', () => {
  const post = async (payload: string) => {
    const app = Fastify();
    installJsonBodyParser(app);
    installErrorHandler(app, createLogger({ name: 'test', level: 'silent' }));
    app.post('/', async (request) => ({ got: request.body }));
    const response = await app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    await app.close();
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };

  it('parses plain JSON, and says what is wrong with the rest', async () => {
    expect(await post('{"a":[1,{"constructor":"x"}]}')).toEqual({
      status: 200,
      body: { got: { a: [1, { constructor: 'x' }] } },
    });
    expect(await post('{"a": ')).toMatchObject({
      status: 400,
      body: {
        error: { code: 'INVALID_BODY', message: expect.stringMatching(/^the body is not valid JSON: /) },
      },
    });
    expect(await post('')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_BODY' } } });
  });

  it('refuses a __proto__ key however it is spelt, naming it', async () => {
    for (const raw of [
      '{"__proto__":{"x":1}}',
      '{"\\u005f_proto__":{"x":1}}',
      '{"a":{"__proto\\u005f_":1}}',
    ]) {
      const { status, body } = await post(raw);
      expect(status, raw).toBe(400);
      expect(body).toMatchObject({
        error: { code: 'INVALID_BODY', message: expect.stringContaining('"__proto__" key') },
      });
    }
  });
});

describe('parseJsonBody', () => {
  it('replaces lone surrogate escapes with U+FFFD in values and keys, keeping pairs and key order', () => {
    const text = String.raw`{"text":"abcd\ud83d","k\udc00":["\uDFFF",{"x":"\ud83d\ude00"}],"z":"\\ud800"}`;
    const value = parseJsonBody(text);
    expect(value).toEqual({ text: 'abcd\uFFFD', 'k\uFFFD': ['\uFFFD', { x: '😀' }], z: '\\ud800' });
    expect(Object.keys(value as object)).toEqual(['text', 'k\uFFFD', 'z']);
    expect(parseJsonBody('"\\ud800"')).toBe('\uFFFD');
  });
});
