import { LRUCache } from 'lru-cache';

/** How much a cache may hold: it drops its least recently used entries past either bound. */
export interface CacheBounds {
  maxEntries: number;
  /** Of the entries' sizes as `approximateBytes` counts them. */
  maxBytes: number;
}

/** What a cache holds now (the metrics' `flowbox_cache_entries` and `flowbox_cache_bytes`). */
export interface CacheUsage {
  entries: number;
  /** As `approximateBytes` counts them; unset for a cache bounded by entries alone. */
  bytes?: number;
}

/**
 * An entry's size for the byte bound: its key's and its value's JSON length in UTF-8. Not the
 * heap's exact figure (object headers and the map's own slots come on top, per entry, which the
 * entry bound bounds), but it grows with what the entry holds.
 */
export function approximateBytes(value: unknown, key: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(JSON.stringify(value) ?? '') + 1;
}

/** A least-recently-used cache of `bounds`, its entries sized by `approximateBytes`. */
export function boundedCache<V extends {}>(
  bounds: CacheBounds,
  options: Omit<LRUCache.Options<string, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<string, V> {
  return new LRUCache<string, V>({
    ...options,
    max: bounds.maxEntries,
    maxSize: bounds.maxBytes,
    sizeCalculation: approximateBytes,
  });
}

export const usageOf = (cache: { size: number; calculatedSize: number }): CacheUsage => ({
  entries: cache.size,
  bytes: cache.calculatedSize,
});
