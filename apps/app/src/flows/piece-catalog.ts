import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { FlowboxError, type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';

/** The piece packages this app publishes at start; each is built by `pnpm build` into an archive. */
export const BUILT_IN_PIECE_PACKAGES = ['@flowbox/piece-webhook', '@flowbox/piece-math-helper'] as const;

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
