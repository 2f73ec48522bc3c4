import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConnectionCipher, keyIdOf } from './connection-cipher.ts';

describe('ConnectionCipher', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('seals under the current key, with a fresh IV each time, and opens it again', () => {
    const cipher = new ConnectionCipher({ current: newKey, previous: undefined });
    const a = cipher.seal('api', '"token-1"');
    const b = cipher.seal('api', '"token-1"');
    expect(a.keyId).toBe(keyIdOf(newKey));
    expect(a.iv.equals(b.iv)).toBe(false);
    expect(a.ciphertext.includes(Buffer.from('token-1'))).toBe(false);
    expect(cipher.open('api', a)).toBe('"token-1"');
  });

  it('opens what the previous key sealed, by key id, and not under another name', () => {
    const sealed = new ConnectionCipher({ current: oldKey, previous: undefined }).seal('api', 'v');
    const rotated = new ConnectionCipher({ current: newKey, previous: oldKey });
    expect(rotated.open('api', sealed)).toBe('v');
    expect(() => rotated.open('other', sealed)).toThrow();
    expect(() => new ConnectionCipher({ current: newKey, previous: undefined }).open('api', sealed)).toThrow(
      /CONNECTIONS_KEY_PREVIOUS/,
    );
  });

  it('refuses to seal without a key', () => {
    expect(() => new ConnectionCipher({ current: undefined, previous: undefined }).seal('a', 'v')).toThrow(
      /CONNECTIONS_KEY/,
    );
  });
});
