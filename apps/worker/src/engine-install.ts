import { mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { FlowboxError } from '@flowbox/protocol';
import { sha256Hex } from './artifact-download.ts';
import { type CacheLayout, renameDirIntoPlace } from './cache-layout.ts';

export const ENGINE_FILE = 'engine.mjs';

export interface InstalledEngine {
  /** The file to fork: `<cache>/engine/<sha256>/engine.mjs`. */
  entry: string;
  /** The engine's NODE_COMPILE_CACHE (created here, writable). */
  compileCacheDir: string;
  sha256: string;
  outcome: 'hit' | 'miss';
}

export interface EngineInstallOptions {
  layout: CacheLayout;
  /** The build output, e.g. apps/engine/dist/engine.mjs, with `engine.mjs.sha256` beside it. */
  bundlePath: string;
  /** The isolated-vm package the engine's external `isolated-vm` import must resolve to. */
  isolatedVmDir: string;
}

/**
 * Copies the engine bundle into the cache under its hash, with a `node_modules/isolated-vm`
 * symlink beside it: isolated-vm is a native addon, so the bundle imports it rather than
 * inlining it, and Node resolves that import from the bundle's own folder.
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
  if (await holds(dir, sha256, isolatedVmDir)) return { entry, compileCacheDir, sha256, outcome: 'hit' };

  const tmpDir = await layout.tmpPath(`engine-${sha256}`);
  try {
    await mkdir(path.join(tmpDir, 'node_modules'), { recursive: true });
    await writeFile(path.join(tmpDir, ENGINE_FILE), bytes);
    await symlink(isolatedVmDir, path.join(tmpDir, 'node_modules', 'isolated-vm'), 'dir');
    await rm(dir, { recursive: true, force: true });
    const placed = await renameDirIntoPlace(tmpDir, dir);
    if (placed === 'raced' && !(await holds(dir, sha256, isolatedVmDir))) {
      throw new FlowboxError('PROVISION_FAILED', `another process left a broken engine install at ${dir}`);
    }
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
  return { entry, compileCacheDir, sha256, outcome: 'miss' };
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
