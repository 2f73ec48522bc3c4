import { LRUCache } from 'lru-cache';
import type { CacheUsage } from '../cache/bounded-cache.ts';

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
  /** Least recently used dropped first; an entry is a key and a URL, so the count bounds its bytes. */
  readonly #signed: LRUCache<string, Signed>;

  constructor(presign: PresignDownload, options: { maxEntries: number; now?: () => number }) {
    this.#presign = presign;
    this.#now = options.now ?? Date.now;
    this.#signed = new LRUCache({ max: options.maxEntries });
  }

  /** URLs held. */
  usage(): CacheUsage {
    return { entries: this.#signed.size };
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
