import { describe, expect, it } from 'vitest';
import { parseForm, parseWebhookBody } from './webhook-body.ts';

const parse = (type: string, raw: string | Buffer) =>
  parseWebhookBody(type, typeof raw === 'string' ? Buffer.from(raw) : raw, 64);

describe('parseWebhookBody', () => {
  it('keeps a JSON body as the object and its text', () => {
    expect(parse('application/json; charset=utf-8', '{"a": [1]}')).toEqual({
      body: { a: [1] },
      rawBody: '{"a": [1]}',
      rawBodyEncoding: 'utf8',
    });
    expect(parse('application/vnd.api+json', '{}').body).toEqual({});
  });

  it('refuses JSON that is not an object, or too deep', () => {
    expect(() => parse('application/json', '[1]')).toThrow('the webhook body must be a JSON object');
    expect(() => parseWebhookBody('application/json', Buffer.from('{"a":{"b":{}}}'), 2)).toThrow(
      /nests deeper than 2 levels/,
    );
  });

  it('parses a form, keeping every value of a repeated key in order', () => {
    const parsed = parse('application/x-www-form-urlencoded', 'a=1&b=x+y&a=2&c=%26&a=3');
    expect(parsed).toEqual({
      body: { a: ['1', '2', '3'], b: 'x y', c: '&' },
      rawBody: 'a=1&b=x+y&a=2&c=%26&a=3',
      rawBodyEncoding: 'utf8',
    });
  });

  it('refuses a form with a __proto__ field', () => {
    expect(() => parseForm('__proto__=x&a=1')).toThrow(/__proto__/);
    expect(Object.getPrototypeOf(parseForm('a=1'))).toBe(Object.prototype);
  });

  it('keeps text as text', () => {
    expect(parse('text/plain; charset=utf-8', 'héllo')).toEqual({
      body: 'héllo',
      rawBody: 'héllo',
      rawBodyEncoding: 'utf8',
    });
    expect(parse('text/csv', 'a,b').body).toBe('a,b');
  });

  it('keeps any other type, or none, as base64 with a null body', () => {
    const bytes = Buffer.from([0, 255, 1, 128]);
    for (const type of ['application/octet-stream', 'image/png', 'multipart/form-data; boundary=x', '']) {
      expect(parse(type, bytes)).toEqual({
        body: null,
        rawBody: bytes.toString('base64'),
        rawBodyEncoding: 'base64',
      });
    }
  });

  it('hands an empty body that is not JSON on as no body', () => {
    expect(parse('text/plain', '')).toEqual({ body: {}, rawBody: '', rawBodyEncoding: 'utf8' });
    expect(() => parse('application/json', '')).toThrow(/empty/);
  });
});
