import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { FlowboxError } from '@flowbox/protocol';

/** A value as stored: AES-256-GCM output and the id of the key that sealed it. */
export interface SealedValue {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  keyId: string;
}

/** The 32-byte key's id: a short hash of it, stored with each value (never the key). */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * Seals values with CONNECTIONS_KEY and opens them with it or CONNECTIONS_KEY_PREVIOUS, chosen by
 * the row's key id. The connection's name is the associated data: a ciphertext copied onto
 * another name does not open.
 */
export class ConnectionCipher {
  readonly #current: { id: string; key: Buffer } | null;
  readonly #keys = new Map<string, Buffer>();

  constructor(keys: { current: Buffer | undefined; previous: Buffer | undefined }) {
    this.#current = keys.current === undefined ? null : { id: keyIdOf(keys.current), key: keys.current };
    if (keys.previous !== undefined) this.#keys.set(keyIdOf(keys.previous), keys.previous);
    if (this.#current !== null) this.#keys.set(this.#current.id, this.#current.key);
  }

  /** The id new values are sealed under; null without CONNECTIONS_KEY. */
  get currentKeyId(): string | null {
    return this.#current?.id ?? null;
  }

  canOpen(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  seal(name: string, plaintext: string): SealedValue {
    if (this.#current === null) throw noKey();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv);
    cipher.setAAD(Buffer.from(name, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, iv, authTag: cipher.getAuthTag(), keyId: this.#current.id };
  }

  open(name: string, sealed: SealedValue): string {
    const key = this.#keys.get(sealed.keyId);
    if (key === undefined) {
      throw new FlowboxError(
        'INTERNAL',
        `connection ${name} is sealed under key ${sealed.keyId}, which neither CONNECTIONS_KEY nor CONNECTIONS_KEY_PREVIOUS is`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(sealed.authTag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  }
}

/** GCM's recommended nonce size; a random one per value. */
const IV_BYTES = 12;

function noKey(): FlowboxError {
  return new FlowboxError('INTERNAL', 'connections need CONNECTIONS_KEY, which this app was started without');
}
