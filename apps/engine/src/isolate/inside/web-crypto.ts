import { callSync } from './host-bridge.ts';
import { toBytes } from './text-codecs.ts';

/**
 * Runs inside a run's isolate: the part of Web Crypto pieces and code steps use, each answered
 * by the engine's node:crypto through the host bridge: `getRandomValues`, `randomUUID`,
 * `subtle.digest` (SHA-1/256/384/512) and HMAC keys (`importKey('raw')`, `sign`, `verify`).
 */
const HASHES = new Set(['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']);
const MAX_RANDOM_BYTES = 65_536;

type Algorithm = string | { name?: unknown; hash?: unknown };

function hashName(algorithm: unknown): string {
  const name =
    typeof algorithm === 'string' ? algorithm : String((algorithm as { name?: unknown } | null)?.name);
  const upper = name.toUpperCase();
  if (!HASHES.has(upper)) throw new Error(`NotSupportedError: ${name} is not a supported digest`);
  return upper;
}

interface HmacKey {
  readonly type: 'secret';
  readonly extractable: boolean;
  readonly algorithm: { name: 'HMAC'; hash: { name: string } };
  readonly usages: string[];
}

const keyBytes = new WeakMap<HmacKey, Uint8Array>();

function bytesOf(data: unknown): Uint8Array {
  return Uint8Array.from(toBytes(data as ArrayBuffer | ArrayBufferView));
}

function asArrayBuffer(bytes: unknown): ArrayBuffer {
  const view = bytes as Uint8Array;
  return view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength) as ArrayBuffer;
}

function hmacKey(key: unknown): [HmacKey, Uint8Array] {
  const bytes = keyBytes.get(key as HmacKey);
  if (bytes === undefined) throw new TypeError('the key is not an HMAC key from importKey');
  return [key as HmacKey, bytes];
}

export const subtle = {
  async digest(algorithm: Algorithm, data: unknown): Promise<ArrayBuffer> {
    return asArrayBuffer(callSync('digest', hashName(algorithm), bytesOf(data)));
  },
  async importKey(
    format: string,
    data: unknown,
    algorithm: Algorithm,
    extractable: boolean,
    usages: string[],
  ): Promise<HmacKey> {
    const name = typeof algorithm === 'string' ? algorithm : String(algorithm.name);
    if (format !== 'raw' || name.toUpperCase() !== 'HMAC' || typeof algorithm === 'string') {
      throw new Error('NotSupportedError: only raw HMAC keys can be imported');
    }
    const key: HmacKey = {
      type: 'secret',
      extractable: Boolean(extractable),
      algorithm: { name: 'HMAC', hash: { name: hashName(algorithm.hash) } },
      usages: [...usages],
    };
    keyBytes.set(key, bytesOf(data));
    return key;
  },
  async sign(_algorithm: Algorithm, key: unknown, data: unknown): Promise<ArrayBuffer> {
    const [hmac, secret] = hmacKey(key);
    return asArrayBuffer(callSync('hmac', hmac.algorithm.hash.name, secret, bytesOf(data)));
  },
  async verify(_algorithm: Algorithm, key: unknown, signature: unknown, data: unknown): Promise<boolean> {
    const [hmac, secret] = hmacKey(key);
    const expected = new Uint8Array(
      asArrayBuffer(callSync('hmac', hmac.algorithm.hash.name, secret, bytesOf(data))),
    );
    const given = bytesOf(signature);
    if (given.length !== expected.length) return false;
    let difference = 0;
    for (let i = 0; i < given.length; i += 1) difference |= (given[i] ?? 0) ^ (expected[i] ?? 0);
    return difference === 0;
  },
};

export const crypto = {
  subtle,
  getRandomValues<T extends ArrayBufferView>(array: T): T {
    if (
      !ArrayBuffer.isView(array) ||
      array instanceof Float32Array ||
      array instanceof Float64Array ||
      array instanceof DataView
    ) {
      throw new TypeError('getRandomValues needs an integer typed array');
    }
    if (array.byteLength > MAX_RANDOM_BYTES) {
      throw new Error(`QuotaExceededError: at most ${MAX_RANDOM_BYTES} bytes at once`);
    }
    const random = callSync('random-bytes', array.byteLength) as Uint8Array;
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(random);
    return array;
  },
  randomUUID(): string {
    return String(callSync('uuid'));
  },
};
