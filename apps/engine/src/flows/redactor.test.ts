import type { TriggerPayload } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { createRedactor } from './redactor.ts';

const request = (headers: Record<string, string> = {}): TriggerPayload => ({
  method: 'POST',
  headers,
  query: {},
  body: {},
  rawBody: '',
  rawBodyEncoding: 'utf8',
});

describe('createRedactor', () => {
  it('is null when the run has no connection and no credential header, so nothing is walked', () => {
    expect(createRedactor({ connections: undefined, trigger: request({ 'x-other': 'visible' }) })).toBeNull();
    expect(createRedactor({ connections: {}, trigger: request() })).toBeNull();
  });

  it('replaces a value, its JSON-escaped and URL-encoded forms, in every string, keys included', () => {
    const secret = 'tok"en/with spaces';
    const redactor = createRedactor({ connections: { api: secret }, trigger: request() });
    const shown = redactor?.value({
      input: { authorization: `Bearer ${secret}` },
      json: JSON.stringify({ token: secret }),
      url: `https://x.test/?t=${encodeURIComponent(secret)}`,
      list: [secret, 42, null],
      [secret]: true,
    });
    expect(shown).toEqual({
      input: { authorization: 'Bearer [connection:api]' },
      json: '{"token":"[connection:api]"}',
      url: 'https://x.test/?t=[connection:api]',
      list: ['[connection:api]', 42, null],
      '[connection:api]': true,
    });
    expect(JSON.stringify(shown)).not.toContain('spaces');
  });

  describe('the spellings flowbox produces when a flow sends a secret on', () => {
    const secret = 'pa ss+w/o"rd&=~`{}\'\u00e9';
    const redactor = createRedactor({ connections: { api: secret }, trigger: request() });
    const shown = (text: string) => redactor?.text(text);
    const url = new URL('https://x.test/');
    url.searchParams.append('q', secret);

    it.each([
      ['percent-encoded, space as %20', `t=${encodeURIComponent(secret)}`],
      ['form-encoded, space as +', new URLSearchParams({ t: secret }).toString()],
      ['a query parameter the http piece adds', url.toString()],
      ["a template inside a URL's query", new URL(`https://x.test/?${secret}`).toString()],
      ["a template inside a URL's path", new URL(`https://x.test/${secret}`).toString()],
      ['base64, as a Basic credential', `Basic ${Buffer.from(secret).toString('base64')}`],
      ['JSON-escaped', JSON.stringify({ t: secret })],
      [
        'an echoed form body inside JSON',
        JSON.stringify({ body: new URLSearchParams({ t: secret }).toString() }),
      ],
      ['an echoed JSON body inside JSON', JSON.stringify({ body: JSON.stringify({ t: secret }) })],
      ['an echoed URL inside JSON', JSON.stringify({ url: new URL(`https://x.test/?${secret}`).toString() })],
    ])('%s', (_, text) => {
      const redacted = shown(text) ?? '';
      expect(redacted).toContain('[connection:api]');
      expect(redacted).not.toMatch(/pa(\+|%20| )ss/);
    });

    it('keeps a secret the URL parser would cut (a `#`) to its other spellings', () => {
      const hashed = createRedactor({ connections: { api: 'abc#def ghi' }, trigger: request() });
      expect(hashed?.text('q=abc%23def%20ghi r=abc%23def+ghi')).toBe('q=[connection:api] r=[connection:api]');
    });
  });

  it('redacts a JSON value whole and its string fields of 8 characters or more, not short ones', () => {
    const value = { user: 'bot', password: 'correct-horse-battery', region: 'eu' };
    const redactor = createRedactor({ connections: { db: value }, trigger: request() });
    expect(redactor?.value(['pw correct-horse-battery', JSON.stringify(value), 'region eu for bot'])).toEqual(
      ['pw [connection:db]', '[connection:db]', 'region eu for bot'],
    );
  });

  it('shows credential headers and the signature header by name, and their bearer token alone', () => {
    const redactor = createRedactor({
      connections: undefined,
      trigger: request({
        authorization: 'Bearer abc123token',
        cookie: 'session=s3cr3t-cookie',
        'x-hub-signature-256': 'sha256=deadbeefdeadbeef',
        'user-agent': 'GitHub-Hookshot',
      }),
      signatureHeader: 'x-hub-signature-256',
    });
    const headers = redactor?.value(
      request({
        authorization: 'Bearer abc123token',
        cookie: 'session=s3cr3t-cookie',
        'x-hub-signature-256': 'sha256=deadbeefdeadbeef',
        'user-agent': 'GitHub-Hookshot',
      }),
    ).headers;
    expect(headers).toEqual({
      authorization: '[header:authorization]',
      cookie: '[header:cookie]',
      'x-hub-signature-256': '[header:x-hub-signature-256]',
      'user-agent': 'GitHub-Hookshot',
    });
    expect(redactor?.text('passed on: abc123token')).toBe('passed on: [header:authorization]');
  });

  it('replaces the longest secret first and leaves values under 4 characters alone', () => {
    const redactor = createRedactor({
      connections: { long: 'abcdefgh', inner: 'cdef', tiny: 'ab' },
      trigger: request(),
    });
    expect(redactor?.text('abcdefgh cdef ab')).toBe('[connection:long] [connection:inner] ab');
  });

  it('does not change what it is given', () => {
    const redactor = createRedactor({ connections: { api: 'secret-value' }, trigger: request() });
    const input = { a: 'secret-value' };
    redactor?.value(input);
    expect(input.a).toBe('secret-value');
  });
});
