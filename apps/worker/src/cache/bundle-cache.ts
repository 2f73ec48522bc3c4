import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { ArtifactDownload } from '@flowbox/protocol';
import { downloadVerified, type FetchFn, sha256Hex } from './artifact-download.ts';
import { type CacheLayout, writeFileAtomic } from './cache-layout.ts';

export interface CachedArtifact {
  path: string;
  outcome: 'hit' | 'miss';
}

export interface BundleCacheOptions {
  layout: CacheLayout;
  fetch: FetchFn;
  fetchTimeoutMs: number;
}

/**
 * Flow bundles by flow version and hash. A hit costs one read and one sha256 of a small file
 * and no request; an entry that is gone, truncated or altered is fetched again.
 */
export function createBundleCache(options: BundleCacheOptions) {
  const { layout } = options;
  return {
    async ensure(flowVersionId: string, bundle: ArtifactDownload): Promise<CachedArtifact> {
      const file = layout.bundleFile(flowVersionId, bundle.sha256);
      if (await holds(file, bundle)) return { path: file, outcome: 'hit' };
      const bytes = await downloadVerified({
        fetch: options.fetch,
        artifact: bundle,
        label: `flow bundle of flow version ${flowVersionId}`,
        timeoutMs: options.fetchTimeoutMs,
      });
      await writeFileAtomic(layout, file, bytes);
      return { path: file, outcome: 'miss' };
    },
  };
}

/**
 * Synchronous on purpose: checked before every job on a small local file, where readFile's
 * thread-pool round trips cost a third of the worker's CPU per warm job.
 */
async function holds(file: string, bundle: ArtifactDownload): Promise<boolean> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return false;
  }
  if (bytes.byteLength === bundle.sizeBytes && sha256Hex(bytes) === bundle.sha256) return true;
  // Corrupt: drop it so a failed refetch does not leave it to be checked again and again.
  await rm(file, { force: true });
  return false;
}
