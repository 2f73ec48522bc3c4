import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Piece } from '@flowbox/pieces-framework';
import {
  type EngineJob,
  FlowboxError,
  type PieceManifest,
  PieceManifestSchema,
  parseMessage,
} from '@flowbox/protocol';
import { shareModulesWithPieces } from './shared-piece-modules.ts';

/** A piece the worker unpacked into its cache: `<dir>/manifest.json` and `<dir>/index.mjs`. */
export type ProvisionedPiece = EngineJob['pieces'][number];

/** Loads pieces from the worker's cache; a piece that cannot be used is `PROVISION_FAILED`. */
export interface PieceLoader {
  load(piece: ProvisionedPiece): Promise<Piece>;
}

/**
 * A piece's ES module, loaded with `require()`: snapshot code has no dynamic `import()`, and a
 * test runner's `import()` would not resolve the shared imports (shared-piece-modules.ts).
 * Pieces have no top-level await, so `require()` loads them as `import()` would.
 */
function requirePiece(file: string): { default?: unknown } {
  return process.getBuiltinModule('node:module').createRequire(file)(file) as { default?: unknown };
}

/**
 * A piece directory holds one immutable version, and an imported module stays in Node's module
 * map anyway, so each directory is loaded once per engine and kept.
 */
export function createPieceLoader(): PieceLoader {
  shareModulesWithPieces();
  const cache = new Map<string, Promise<Piece>>();
  return {
    load(piece) {
      const cached = cache.get(piece.dir);
      const loading = cached ?? loadPiece(piece.dir);
      if (cached === undefined) {
        cache.set(piece.dir, loading);
        loading.catch(() => cache.delete(piece.dir));
      }
      return loading.then((loaded) => {
        if (loaded.name !== piece.name || loaded.version !== piece.version) {
          throw provisionFailed(
            piece.dir,
            `holds ${loaded.name}@${loaded.version}, not ${piece.name}@${piece.version}`,
          );
        }
        return loaded;
      });
    },
  };
}

async function loadPiece(dir: string): Promise<Piece> {
  const manifest = await readManifest(dir);
  let exported: unknown;
  try {
    const module = requirePiece(join(dir, manifest.entry));
    exported = module.default;
  } catch (error) {
    // The build leaves out only the framework: a bare 'zod' import is a piece whose input is a
    // zod schema, which no engine validates.
    const legacy = /'zod'/.test(messageOf(error))
      ? '; the piece declares its input with zod: declare it as props with Property builders and publish a new version (docs/pieces.md, "Inputs")'
      : '';
    throw provisionFailed(dir, `cannot import ${manifest.entry}: ${messageOf(error)}${legacy}`, error);
  }
  if (!isPiece(exported))
    throw provisionFailed(dir, `${manifest.entry} does not export a piece as its default`);
  const sameNames = (have: Iterable<string>, want: readonly string[]) =>
    [...have].sort().join(',') === [...want].sort().join(',');
  if (
    exported.name !== manifest.name ||
    exported.version !== manifest.version ||
    !sameNames(exported.actions.keys(), manifest.actions) ||
    !sameNames(exported.triggers.keys(), manifest.triggers)
  ) {
    throw provisionFailed(dir, 'the piece does not match its manifest');
  }
  return exported;
}

async function readManifest(dir: string): Promise<PieceManifest> {
  let frame: unknown;
  try {
    frame = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  } catch (error) {
    throw provisionFailed(dir, `cannot read manifest.json: ${messageOf(error)}`, error);
  }
  const parsed = parseMessage(PieceManifestSchema, frame);
  if (!parsed.ok) throw provisionFailed(dir, `invalid manifest.json: ${parsed.error}`);
  return parsed.value;
}

function isPiece(value: unknown): value is Piece {
  if (typeof value !== 'object' || value === null) return false;
  const piece = value as Record<string, unknown>;
  return (
    typeof piece.name === 'string' &&
    typeof piece.version === 'string' &&
    piece.actions instanceof Map &&
    piece.triggers instanceof Map
  );
}

function provisionFailed(dir: string, reason: string, cause?: unknown): FlowboxError {
  return new FlowboxError(
    'PROVISION_FAILED',
    `piece in ${dir} ${reason}`,
    cause === undefined ? undefined : { cause },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
