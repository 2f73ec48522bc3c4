import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { FlowboxError, type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';

/** The piece packages this app publishes at start; each is built by `pnpm build` into an archive. */
export const BUILT_IN_PIECE_PACKAGES = [
  '@flowbox/piece-webhook',
  '@flowbox/piece-math-helper',
  '@flowbox/piece-http',
] as const;

export interface CatalogPiece {
  manifest: PieceManifest;
  /** The archive built by `pnpm build` (`dist/piece.tgz` of the piece package). */
  archivePath: string;
}

/** The pieces flows may use, by name; one version of each. */
export class PieceCatalog {
  readonly #pieces: Map<string, CatalogPiece>;

  constructor(pieces: CatalogPiece[]) {
    this.#pieces = new Map(pieces.map((piece) => [piece.manifest.name, piece]));
  }

  /**
   * The built-in pieces, plus the ones built into `extraPiecesDir` (EXTRA_PIECES_DIR: tests and
   * development only, e.g. the fault-injection suite's piece that exits its engine). Off by
   * default, so a deployment publishes exactly the built-in pieces; an extra piece may never
   * take a built-in piece's name.
   */
  static async load(options: { extraPiecesDir?: string | undefined } = {}): Promise<PieceCatalog> {
    const builtIn = await PieceCatalog.loadBuiltIn();
    if (options.extraPiecesDir === undefined) return builtIn;
    const extra = await loadBuiltDirs(options.extraPiecesDir);
    for (const piece of extra) {
      if (builtIn.get(piece.manifest.name) !== undefined) {
        throw new FlowboxError(
          'INTERNAL',
          `EXTRA_PIECES_DIR: piece ${piece.manifest.name} would replace the built-in piece of that name`,
        );
      }
    }
    return new PieceCatalog([...builtIn.all, ...extra]);
  }

  static async loadBuiltIn(packages: readonly string[] = BUILT_IN_PIECE_PACKAGES): Promise<PieceCatalog> {
    const require = createRequire(import.meta.url);
    const pieces: CatalogPiece[] = [];
    for (const name of packages) {
      let manifestPath: string;
      let archivePath: string;
      try {
        manifestPath = require.resolve(`${name}/manifest`);
        archivePath = require.resolve(`${name}/archive`);
      } catch (error) {
        throw new FlowboxError('INTERNAL', `piece ${name} is not built; run \`pnpm build\` first`, {
          cause: error,
        });
      }
      const manifest = PieceManifestSchema.parse(JSON.parse(await readFile(manifestPath, 'utf8')));
      pieces.push({ manifest, archivePath });
    }
    return new PieceCatalog(pieces);
  }

  get(name: string): CatalogPiece | undefined {
    return this.#pieces.get(name);
  }

  get all(): CatalogPiece[] {
    return [...this.#pieces.values()];
  }
}

/** Every sub-directory of `dir` that holds a built piece: `manifest.json` and `piece.tgz`. */
async function loadBuiltDirs(dir: string): Promise<CatalogPiece[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    throw new FlowboxError('INTERNAL', `EXTRA_PIECES_DIR: cannot read ${dir}`, { cause: error });
  }
  const pieces: CatalogPiece[] = [];
  for (const name of entries.sort()) {
    const manifestPath = join(dir, name, 'manifest.json');
    let raw: string;
    try {
      raw = await readFile(manifestPath, 'utf8');
    } catch {
      continue; // not a built piece
    }
    const manifest = PieceManifestSchema.parse(JSON.parse(raw));
    pieces.push({ manifest, archivePath: join(dir, name, 'piece.tgz') });
  }
  return pieces;
}
