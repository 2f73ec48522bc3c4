import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { code, flowOf } from '../../test/support/isolate-harness.ts';

const h = useExecutorHarness();

const PROBE = `const encoder = new TextEncoder();
const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
const bytes = encoder.encode('héllo € 𝄞');
const key = await crypto.subtle.importKey('raw', encoder.encode('key'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
const mac = await crypto.subtle.sign('HMAC', key, encoder.encode('data'));
const url = new URL('/path?q=1', 'https://example.com:8443');
url.searchParams.append('x', 'a b&c');
const random = crypto.getRandomValues(new Uint8Array(16));
return {
  text: new TextDecoder().decode(bytes),
  bytes: bytes.length,
  sha256: hex(await crypto.subtle.digest('SHA-256', encoder.encode('abc'))),
  hmac: hex(mac),
  verified: await crypto.subtle.verify('HMAC', key, mac, encoder.encode('data')),
  url: url.href,
  host: url.host,
  query: Object.fromEntries(new URLSearchParams('a=1&b=two+words&b=3')),
  invalidUrl: URL.canParse('not a url'),
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
  randomFilled: random.some((b) => b !== 0) || random.length === 16,
  clone: structuredClone({ a: [1, { b: new Date(0) }] }).a[1].b instanceof Date,
  base64: [btoa('hi there'), atob('aGkgdGhlcmU=')],
  absent: [typeof require, typeof process, typeof WebAssembly, typeof module, typeof Buffer],
};`;

describe('what a run in its own isolate is handed', () => {
  it('web crypto, text codecs, URL, structuredClone and base64, and nothing of Node', async () => {
    const { outcome } = await h.executor.execute(
      await h.job(flowOf(code('step_1', PROBE)), { isolation: 'isolate' }),
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.steps[1]?.output).toEqual({
      text: 'héllo € 𝄞',
      bytes: Buffer.byteLength('héllo € 𝄞'),
      sha256: createHash('sha256').update('abc').digest('hex'),
      hmac: createHmac('sha256', 'key').update('data').digest('hex'),
      verified: true,
      url: 'https://example.com:8443/path?q=1&x=a+b%26c',
      host: 'example.com:8443',
      query: { a: '1', b: '3' },
      invalidUrl: false,
      uuid: true,
      randomFilled: true,
      clone: true,
      base64: ['aGkgdGhlcmU=', 'hi there'],
      absent: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined'],
    });
  });
});
