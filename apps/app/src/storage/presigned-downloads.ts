/** What signs a download URL (ObjectStorage.presignDownload). */
export type PresignDownload = (key: string, expiresInSeconds: number) => Promise<string>;

interface Signed {
  url: Promise<string>;
  /** Epoch ms until which the URL stays valid. */
  validUntil: number;
}

/**
 * Presigned GETs for immutable, content-addressed objects (flow bundles, piece archives), reused
 * across jobs. Every job names its bundle and pieces, but a worker downloads them only on a cache
 * miss; signing them afresh for every job cost the app about 1 ms of CPU each. A URL is signed
 * for twice the validity a job needs and handed out while at least that validity remains, so
 * every job still receives a URL good for its whole run. Such a URL grants nothing beyond what
 * any job's would: reading one immutable object.
 */
export class PresignedDownloads {
  readonly #presign: PresignDownload;
  readonly #now: () => number;
  readonly #signed = new Map<string, Signed>();

  constructor(presign: PresignDownload, now: () => number = Date.now) {
    this.#presign = presign;
    this.#now = now;
  }

  /** A URL for `key` valid for at least `validSeconds` from now. */
  url(key: string, validSeconds: number): Promise<string> {
    const now = this.#now();
    const cached = this.#signed.get(key);
    if (cached !== undefined && cached.validUntil - now >= validSeconds * 1000) return cached.url;
    const lifetime = validSeconds * 2;
    const url = this.#presign(key, lifetime);
    const entry = { url, validUntil: now + lifetime * 1000 };
    this.#signed.set(key, entry);
    // A failed signature is not kept: the next job signs again.
    url.catch(() => {
      if (this.#signed.get(key) === entry) this.#signed.delete(key);
    });
    return url;
  }
}
