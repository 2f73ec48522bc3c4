import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FlowboxError } from '@flowbox/protocol';
import type { PieceRegistry, PublishOutcome } from './piece-registry.ts';

const PACKAGES_DIR = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'packages');

export interface BuiltPiece {
  /** The package directory. */
  dir: string;
  manifest: unknown;
  archive: Buffer;
}

/**
 * The built-in pieces: every workspace package whose package.json has `flowbox.piece`, as
 * `pnpm build` built it (`dist/manifest.json`, `dist/piece.tgz`). No list to keep: a new piece
 * package is published by the next start after its build.
 */
export async function findBuiltInPieces(packagesDir = PACKAGES_DIR): Promise<BuiltPiece[]> {
  const pieces: BuiltPiece[] = [];
  for (const name of (await readdir(packagesDir)).sort()) {
    const dir = path.join(packagesDir, name);
    let pkg: { flowbox?: { piece?: unknown } };
    try {
      pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as typeof pkg;
    } catch {
      continue; // not a package
    }
    if (pkg.flowbox?.piece === undefined) continue;
    try {
      pieces.push({
        dir,
        manifest: JSON.parse(await readFile(path.join(dir, 'dist', 'manifest.json'), 'utf8')) as unknown,
        archive: await readFile(path.join(dir, 'dist', 'piece.tgz')),
      });
    } catch (error) {
      throw new FlowboxError('INTERNAL', `piece package ${dir} is not built; run \`pnpm build\` first`, {
        cause: error,
      });
    }
  }
  return pieces;
}

/**
 * Publishes the built-in pieces through the registry, with the checks every piece gets. Apps
 * starting together publish them at once: the registry's insert is idempotent. A built-in piece
 * changed without a new version fails the start (PIECE_VERSION_EXISTS): versions are immutable,
 * and flows pinned to the old content must not silently run the new.
 */
export async function publishBuiltInPieces(
  registry: PieceRegistry,
  packagesDir?: string,
): Promise<PublishOutcome[]> {
  const outcomes: PublishOutcome[] = [];
  for (const piece of await findBuiltInPieces(packagesDir)) {
    try {
      outcomes.push(await registry.publish({ ...piece, builtIn: true }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const hint =
        error instanceof FlowboxError && error.code === 'PIECE_VERSION_EXISTS'
          ? `; give ${path.join(piece.dir, 'package.json')} a new version`
          : '';
      throw new FlowboxError('INTERNAL', `built-in piece ${path.basename(piece.dir)}: ${message}${hint}`, {
        cause: error,
      });
    }
  }
  return outcomes;
}
