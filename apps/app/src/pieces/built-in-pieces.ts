import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FlowboxError } from '@flowbox/protocol';
import type { PieceRegistry, PublishOutcome } from './piece-registry.ts';

const PACKAGES_DIR = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'packages');

/** A built-in piece whose name@version the registry holds with other content: the registry's stands. */
export interface BuiltInConflict {
  piece: string;
  packageDir: string;
  message: string;
}

export interface BuiltInPublishOutcome {
  published: PublishOutcome[];
  conflicts: BuiltInConflict[];
}

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
  for (const { dir } of await pieceMarkedPackages(packagesDir)) {
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
 * The built-in pieces' names (`flowbox.piece.name`, else the package's directory name less
 * `piece-`), from their package.json alone: reserved in the registry whether built or not.
 */
export async function builtInPieceNames(packagesDir = PACKAGES_DIR): Promise<Set<string>> {
  return new Set((await pieceMarkedPackages(packagesDir)).map(({ name }) => name));
}

async function pieceMarkedPackages(packagesDir: string): Promise<Array<{ dir: string; name: string }>> {
  const found: Array<{ dir: string; name: string }> = [];
  for (const entry of (await readdir(packagesDir)).sort()) {
    const dir = path.join(packagesDir, entry);
    let pkg: { flowbox?: { piece?: { name?: unknown } } };
    try {
      pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as typeof pkg;
    } catch {
      continue; // not a package
    }
    const piece = pkg.flowbox?.piece;
    if (piece === undefined) continue;
    const name = typeof piece.name === 'string' ? piece.name : entry.replace(/^piece-/, '');
    found.push({ dir, name });
  }
  return found;
}

/**
 * Publishes the built-in pieces through the registry, with the checks every piece gets (and
 * only they may use the reserved names). Apps starting together publish them at once: the
 * registry's insert is idempotent. A name@version the registry already holds with other content
 * (a built-in changed without a new version, or a version published under its name before the
 * names were reserved) does not stop the start: versions are immutable, so the registry's
 * content stands, and the conflict is returned for the caller to log.
 */
export async function publishBuiltInPieces(
  registry: PieceRegistry,
  packagesDir?: string,
): Promise<BuiltInPublishOutcome> {
  const outcome: BuiltInPublishOutcome = { published: [], conflicts: [] };
  for (const piece of await findBuiltInPieces(packagesDir)) {
    try {
      outcome.published.push(await registry.publish(piece, { builtIn: true }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof FlowboxError && error.code === 'PIECE_VERSION_EXISTS') {
        const manifest = piece.manifest as { name?: unknown; version?: unknown };
        outcome.conflicts.push({
          piece: `${String(manifest.name)}@${String(manifest.version)}`,
          packageDir: piece.dir,
          message: `${message}; flows get the registry's content. Yank it (DELETE /v1/pieces/{name}/{version}) if it is not the built-in, and give ${path.join(piece.dir, 'package.json')} a new version`,
        });
        continue;
      }
      throw new FlowboxError('INTERNAL', `built-in piece ${path.basename(piece.dir)}: ${message}`, {
        cause: error,
      });
    }
  }
  return outcome;
}
