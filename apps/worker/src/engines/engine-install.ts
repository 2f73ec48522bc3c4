import { mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ISOLATED_VM_ADDON_FILE, isolatedVmAddonPath } from '@flowbox/engine/isolated-vm-addon';
import { FlowboxError } from '@flowbox/protocol';
import { sha256Hex } from '../cache/artifact-download.ts';
import { type CacheLayout, renameDirIntoPlace, writeFileAtomic } from '../cache/cache-layout.ts';
import { ensureEngineSnapshot, SNAPSHOT_ENTRY } from './engine-snapshot.ts';

export const ENGINE_FILE = 'engine.mjs';

export interface InstalledEngine {
  /** The file to fork: `<cache>/engine/<sha256>/engine.mjs`. */
  entry: string;
  /** The engine's NODE_COMPILE_CACHE (created here, writable). */
  compileCacheDir: string;
  sha256: string;
  outcome: 'hit' | 'miss';
  /**
   * With `snapshot`: the startup snapshot engines start from (engine-snapshot.ts), or why there
   * is none (engines then start from `entry`).
   */
  snapshot?: { blob: string } | { error: string };
}

export interface EngineInstallOptions {
  layout: CacheLayout;
  /** The build output, e.g. apps/engine/dist/engine.mjs, with `engine.mjs.sha256` beside it. */
  bundlePath: string;
  /** The isolated-vm package the engine's external `isolated-vm` import must resolve to. */
  isolatedVmDir: string;
  /** Also install `engine-snapshot.cjs` from beside the bundle and build its startup snapshot. */
  snapshot?: boolean;
}

/**
 * Copies the engine bundle into the cache under its hash, with a `node_modules/isolated-vm`
 * symlink beside it: the bundle imports the native addon, and Node resolves it from there.
 */
export async function installEngine(options: EngineInstallOptions): Promise<InstalledEngine> {
  const { layout, bundlePath, isolatedVmDir } = options;
  let bytes: Buffer;
  try {
    bytes = await readFile(bundlePath);
  } catch (error) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `no engine bundle at ${bundlePath} (run \`pnpm build\` or set ENGINE_BUNDLE): ${String(error)}`,
    );
  }
  const sha256 = sha256Hex(bytes);
  const recorded = await readRecordedHash(`${bundlePath}.sha256`);
  if (recorded !== undefined && recorded !== sha256) {
    throw new FlowboxError(
      'ARTIFACT_INTEGRITY',
      `engine bundle ${bundlePath}: sha256 mismatch: expected ${recorded} (${bundlePath}.sha256), got ${sha256}`,
    );
  }
  const dir = layout.engineDir(sha256);
  const entry = path.join(dir, ENGINE_FILE);
  const { compileCacheDir } = layout;
  await mkdir(compileCacheDir, { recursive: true });
  if (await holds(dir, sha256, isolatedVmDir)) {
    return { entry, compileCacheDir, sha256, outcome: 'hit', ...(await snapshotOf(options, dir)) };
  }

  const tmpDir = await layout.tmpPath(`engine-${sha256}`);
  try {
    await mkdir(path.join(tmpDir, 'node_modules'), { recursive: true });
    await writeFile(path.join(tmpDir, ENGINE_FILE), bytes);
    await symlink(isolatedVmDir, path.join(tmpDir, 'node_modules', 'isolated-vm'), 'dir');
    const addon = isolatedVmAddonPath(isolatedVmDir);
    if (addon !== undefined) await symlink(addon, path.join(tmpDir, ISOLATED_VM_ADDON_FILE), 'file');
    await rm(dir, { recursive: true, force: true });
    const placed = await renameDirIntoPlace(tmpDir, dir);
    if (placed === 'raced' && !(await holds(dir, sha256, isolatedVmDir))) {
      throw new FlowboxError('PROVISION_FAILED', `another process left a broken engine install at ${dir}`);
    }
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
  return { entry, compileCacheDir, sha256, outcome: 'miss', ...(await snapshotOf(options, dir)) };
}

/**
 * Copies the snapshot script beside the installed bundle (verified against its `.sha256` when
 * the build wrote one) and builds the blob. A build without the script, or a Node that cannot
 * build the snapshot, is not an error: engines start from engine.mjs.
 */
async function snapshotOf(
  options: EngineInstallOptions,
  dir: string,
): Promise<Pick<InstalledEngine, 'snapshot'>> {
  if (options.snapshot !== true) return {};
  const source = path.join(path.dirname(options.bundlePath), SNAPSHOT_ENTRY);
  try {
    const bytes = await readFile(source);
    const recorded = await readRecordedHash(`${source}.sha256`);
    if (recorded !== undefined && recorded !== sha256Hex(bytes)) {
      throw new Error(`${source}: sha256 mismatch with ${source}.sha256`);
    }
    const installed = path.join(dir, SNAPSHOT_ENTRY);
    const current = await readFile(installed).catch(() => undefined);
    if (current === undefined || !current.equals(bytes)) {
      await writeFileAtomic(options.layout, installed, bytes);
    }
    return { snapshot: { blob: await ensureEngineSnapshot(dir) } };
  } catch (error) {
    return { snapshot: { error: error instanceof Error ? error.message : String(error) } };
  }
}

async function holds(dir: string, sha256: string, isolatedVmDir: string): Promise<boolean> {
  try {
    const [bytes, link] = await Promise.all([
      readFile(path.join(dir, ENGINE_FILE)),
      readlink(path.join(dir, 'node_modules', 'isolated-vm')),
    ]);
    return sha256Hex(bytes) === sha256 && link === isolatedVmDir;
  } catch {
    return false;
  }
}

/** `<hex>` or sha256sum's `<hex>  engine.mjs`; absent when the build did not write one. */
async function readRecordedHash(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  return /^[0-9a-f]{64}/.exec(text.trim())?.[0];
}

/** The worker's own isolated-vm (a dependency of the worker, so this resolves wherever it is installed). */
export function isolatedVmPackageDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('isolated-vm/package.json'));
}
