import { describe, expect, it } from 'vitest';
import { jsonb } from './jsonb.ts';

describe('jsonb', () => {
  it('stores U+0000 as U+FFFD in keys and values, and leaves an escaped backslash-u0000 as text', () => {
    expect(jsonb({ a: 'x\u0000y', 'k\u0000': 1 })).toBe('{"a":"x\\ufffdy","k\\ufffd":1}');
    expect(JSON.parse(jsonb({ a: 'x\u0000y' }) ?? '')).toEqual({ a: 'x\uFFFDy' });
    // The five characters \u0000 typed as text (a backslash, then u0000) are not a NUL.
    expect(JSON.parse(jsonb({ a: '\\u0000' }) ?? '')).toEqual({ a: '\\u0000' });
    expect(JSON.parse(jsonb({ a: '\\\u0000' }) ?? '')).toEqual({ a: '\\\uFFFD' });
    expect(jsonb(undefined)).toBeNull();
    expect(jsonb([1, 'plain'])).toBe('[1,"plain"]');
  });

  it('stores a lone surrogate as U+FFFD, keeps a pair, and leaves an escaped backslash-ud800 as text', () => {
    const split = 'abcd😀xyz'.slice(0, 5);
    expect(jsonb({ text: split })).toBe('{"text":"abcd\\ufffd"}');
    expect(JSON.parse(jsonb({ '\uDC00k': ['\uD800', '\uDBFF\uDFFF', '\uDFFFx'] }) ?? '')).toEqual({
      '\uFFFDk': ['\uFFFD', '\uDBFF\uDFFF', '\uFFFDx'],
    });
    expect(jsonb({ emoji: '😀' })).toBe('{"emoji":"😀"}');
    expect(JSON.parse(jsonb({ a: '\\ud800' }) ?? '')).toEqual({ a: '\\ud800' });
    expect(JSON.parse(jsonb({ a: '\\\uD800' }) ?? '')).toEqual({ a: '\\\uFFFD' });
  });
});
