import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export { buildPieceArchive, SHARED_PIECE_MODULES } from '@flowbox/pieces-build';

/** `packages/piece-*` folders whose package.json names a piece (`flowbox.piece.name`). */
export async function findPiecePackages(root: string): Promise<string[]> {
  const names = await readdir(join(root, 'packages'));
  const dirs = names.filter((name) => name.startsWith('piece-')).map((name) => join(root, 'packages', name));
  return dirs.sort();
}
