import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';

/** KeyObjects for the byte keys the SDK signs with, by the key's own object (its day's cached key). */
const keyObjects = new WeakMap<object, KeyObject>();

/**
 * The AWS SDK's SHA-256 (its `sha256` client option), as its own Node implementation computes it,
 * but with each HMAC keyed by a KeyObject made once per key rather than by the key's bytes. Node
 * (24) tells a KeyObject from bytes by throwing and catching an error for every byte key: in the
 * app, up to 0.1 ms of CPU per HMAC, the largest part of signing a log upload form. The SDK reuses one byte array per derived signing key (a day, a region,
 * a service), so the map holds one KeyObject for each, and lets it go with the SDK's cache entry.
 * What is signed, and how, stays the SDK's.
 */
export class KeyObjectSha256 {
  readonly digestLength = 32;
  readonly #secret: string | KeyObject | undefined;
  #hash: Hash | Hmac;
  #finished = false;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret === undefined || typeof secret === 'string' ? secret : keyObjectOf(secret);
    this.#hash = this.#create();
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    if (this.#finished) throw new Error('Attempted to update an already finished hash.');
    this.#hash.update(typeof data === 'string' ? data : toView(data));
  }

  async digest(): Promise<Uint8Array> {
    let digest: Buffer;
    if (this.#secret === undefined) {
      // A plain hash may be read again and updated after (the SDK's own does the same).
      digest = (this.#hash as Hash).copy().digest();
    } else {
      this.#finished = true;
      digest = this.#hash.digest();
    }
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
  }

  reset(): void {
    this.#hash = this.#create();
    this.#finished = false;
  }

  #create(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
}

function keyObjectOf(secret: ArrayBuffer | ArrayBufferView): KeyObject {
  let key = keyObjects.get(secret);
  if (key === undefined) {
    key = createSecretKey(toView(secret));
    keyObjects.set(secret, key);
  }
  return key;
}

const toView = (data: ArrayBuffer | ArrayBufferView): Uint8Array =>
  ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
