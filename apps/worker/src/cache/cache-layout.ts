import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Where everything lives in the worker's provisioning cache:
 *
 *   <cacheDir>/bundles/<flowVersionId>-<sha256>.json            verified flow bundles
 *   <cacheDir>/pieces/<name>@<version>-<sha256>/                 unpacked piece archives:
 *       manifest.json, index.mjs, .flowbox-complete.json         (the marker is written last)
 *   <cacheDir>/engine/<sha256>/engine.mjs                         the installed engine bundle
 *   <cacheDir>/engine/<sha256>/node_modules/isolated-vm           → the worker's isolated-vm
 *   <cacheDir>/compile-cache/                                     V8 code cache of every engine
 *                                                                 (NODE_COMPILE_CACHE)
 *   <cacheDir>/tmp/                                               downloads and unpacks in progress
 *   <cacheDir>/sandbox-views/view-<random>/{bundles,pieces}/      SANDBOXED: what one engine sees
 *                                                                 of the cache, its job's entries
 *                                                                 hard-linked (sandbox/job-view.ts)
 *
 * Entries are named by content hash, so a name never points at other bytes; they appear by
 * rename from tmp/ (same filesystem), so a reader never sees half of one.
 */
export interface CacheLayout {
  readonly root: string;
  bundleFile(flowVersionId: string, sha256: string): string;
  pieceDir(name: string, version: string, sha256: string): string;
  engineDir(sha256: string): string;
  /** Where verified flow bundles and unpacked pieces are: all a sandboxed engine may read of the cache. */
  readonly artifactDirs: string[];
  /** Where each sandboxed engine's view of the artifacts is made (same filesystem: hard links). */
  readonly sandboxViewsDir: string;
  /** Shared by every engine the worker forks; Node keys its entries by file hash itself. */
  readonly compileCacheDir: string;
  /** A fresh path under tmp/ for something about to be renamed into place. */
  tmpPath(label: string): Promise<string>;
}

export function createCacheLayout(root: string): CacheLayout {
  return {
    root,
    bundleFile: (flowVersionId, sha256) =>
      path.join(root, 'bundles', `${safeSegment(flowVersionId)}-${sha256}.json`),
    // Piece names and versions are validated by the protocol schema (no slashes, no dots-only).
    pieceDir: (name, version, sha256) => path.join(root, 'pieces', `${name}@${version}-${sha256}`),
    engineDir: (sha256) => path.join(root, 'engine', sha256),
    artifactDirs: [path.join(root, 'bundles'), path.join(root, 'pieces')],
    sandboxViewsDir: path.join(root, 'sandbox-views'),
    compileCacheDir: path.join(root, 'compile-cache'),
    async tmpPath(label) {
      const dir = path.join(root, 'tmp');
      await mkdir(dir, { recursive: true });
      return path.join(dir, `${safeSegment(label)}-${randomUUID()}`);
    },
  };
}

/** flowVersionId comes from the app; it becomes one file name component, whatever it holds. */
function safeSegment(value: string): string {
  return value.replaceAll(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
}

/** Writes a file completely under tmp/, then renames it over `target`. */
export async function writeFileAtomic(layout: CacheLayout, target: string, data: Uint8Array): Promise<void> {
  const tmp = await layout.tmpPath(path.basename(target));
  try {
    await writeFile(tmp, data);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(tmp, target);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/**
 * Moves a completed directory from tmp/ to `target`, replacing a broken entry left there. When
 * another worker sharing the cache got there first, its (verified) entry is kept.
 */
export async function renameDirIntoPlace(tmpDir: string, target: string): Promise<'moved' | 'raced'> {
  await mkdir(path.dirname(target), { recursive: true });
  try {
    await rename(tmpDir, target);
    return 'moved';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    await rm(tmpDir, { recursive: true, force: true });
    return 'raced';
  }
}
