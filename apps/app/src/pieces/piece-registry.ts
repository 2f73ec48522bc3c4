import { createHash } from 'node:crypto';
import { FlowboxError, formatIssues, type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import { type ArchiveFiles, checkPieceArchive } from './piece-archive-check.ts';
import { type LoadedPiece, loadCheckPiece } from './piece-load-check.ts';
import type { LoadCheckIsolation } from './piece-load-sandbox.ts';
import { latestVersion } from './piece-versions.ts';
import type { PieceRecord, PiecesRepository } from './pieces-repository.ts';

export interface PublishOutcome {
  /** False when the same name@version with the same content was there already. */
  created: boolean;
  piece: PieceRecord;
}

/** Every published piece version, by name, with its latest: what flow validation resolves against. */
export class PieceIndex {
  readonly #byName: Map<string, Map<string, PieceRecord>>;

  constructor(records: readonly PieceRecord[]) {
    this.#byName = new Map();
    for (const record of records) {
      const versions = this.#byName.get(record.name) ?? new Map<string, PieceRecord>();
      versions.set(record.version, record);
      this.#byName.set(record.name, versions);
    }
  }

  /** `version` if given, else the latest; undefined when the piece or that version is not published. */
  resolve(name: string, version?: string): PieceRecord | undefined {
    const versions = this.#byName.get(name);
    if (versions === undefined) return undefined;
    const wanted = version ?? latestVersion([...versions.keys()]);
    return wanted === undefined ? undefined : versions.get(wanted);
  }

  versions(name: string): string[] {
    return [...(this.#byName.get(name)?.keys() ?? [])];
  }
}

/**
 * The piece registry: publishing checks a piece (manifest, archive, its module loaded in a
 * child process), stores its archive in S3 under its sha256 and records the version, which is
 * immutable from then on. The built-in pieces are published through it at every start too.
 */
export class PieceRegistry {
  readonly #pieces: PiecesRepository;
  readonly #storage: ObjectStorage;
  readonly #maxArchiveBytes: number;
  readonly #loadCheck: () => LoadCheckIsolation;

  constructor(deps: {
    pieces: PiecesRepository;
    storage: ObjectStorage;
    maxArchiveBytes: number;
    /** Where the load check runs (decided once, on first use: it starts a test sandbox). */
    loadCheck: () => LoadCheckIsolation;
  }) {
    this.#pieces = deps.pieces;
    this.#storage = deps.storage;
    this.#maxArchiveBytes = deps.maxArchiveBytes;
    this.#loadCheck = deps.loadCheck;
  }

  /**
   * Throws INVALID_PIECE (nothing stored), PIECE_VERSION_EXISTS, or PIECE_CHECK_UNAVAILABLE
   * (piece-load-check.ts). `builtIn`: one of the app's own pieces (built-in-pieces.ts).
   */
  async publish(input: { manifest: unknown; archive: Buffer; builtIn?: boolean }): Promise<PublishOutcome> {
    const parsed = PieceManifestSchema.safeParse(input.manifest);
    if (!parsed.success) throw invalid(`manifest: ${formatIssues(parsed.error.issues)}`);
    const manifest = parsed.data;
    const files = checkPieceArchive(input.archive, { maxBytes: this.#maxArchiveBytes });
    checkArchivedManifest(manifest, files);
    const sha256 = createHash('sha256').update(input.archive).digest('hex');
    const id = `${manifest.name}@${manifest.version}`;

    // A version is immutable: known content is answered without loading it again.
    const known = (await this.#pieces.get(manifest.name, manifest.version)) ?? undefined;
    if (known !== undefined && known.sha256 !== sha256) throw exists(id, known.sha256, sha256);
    if (known !== undefined && known.nodeBuiltins !== null && known.actions !== null) {
      return { created: false, piece: known };
    }

    const loaded = await loadCheckPiece(manifest, files, {
      isolation: this.#loadCheck(),
      builtIn: input.builtIn,
    });
    checkLoadedMatches(manifest, loaded);
    if (known !== undefined) {
      await this.#pieces.fillChecks({ ...known, nodeBuiltins: loaded.nodeBuiltins, actions: loaded.actions });
      return {
        created: false,
        piece: { ...known, nodeBuiltins: loaded.nodeBuiltins, actions: loaded.actions },
      };
    }
    const archiveKey = objectKeys.pieceArchive(manifest.name, manifest.version, sha256);
    // Stored before it is recorded: a row always has its archive. An upload whose insert then
    // loses a race is the same key and bytes (same sha256), or an orphan nobody references.
    await this.#storage.put(archiveKey, input.archive, 'application/gzip');
    const inserted = await this.#pieces.insert({
      name: manifest.name,
      version: manifest.version,
      archiveKey,
      sha256,
      sizeBytes: input.archive.byteLength,
      manifest,
      nodeBuiltins: loaded.nodeBuiltins,
      actions: loaded.actions,
    });
    if (inserted.outcome === 'exists' && inserted.piece.sha256 !== sha256) {
      throw exists(id, inserted.piece.sha256, sha256);
    }
    return { created: inserted.outcome === 'created', piece: inserted.piece };
  }

  /** A snapshot of every published version (one query): flow create and publish resolve with it. */
  async index(): Promise<PieceIndex> {
    return new PieceIndex(await this.#pieces.list());
  }

  list(): Promise<PieceRecord[]> {
    return this.#pieces.list();
  }

  /** Throws PIECE_NOT_FOUND when no version of `name` is published. */
  async versionsOf(name: string): Promise<PieceRecord[]> {
    const versions = await this.#pieces.versionsOf(name);
    if (versions.length === 0) throw new FlowboxError('PIECE_NOT_FOUND', `no piece ${name} is published`);
    return versions;
  }
}

/** The archive's own manifest.json is what the worker checks at provision: it must agree. */
function checkArchivedManifest(manifest: PieceManifest, files: ArchiveFiles): void {
  const inside = files.get('manifest.json');
  if (inside === undefined) throw invalid('the archive has no manifest.json');
  let archived: unknown;
  try {
    archived = JSON.parse(inside.toString('utf8'));
  } catch {
    throw invalid("the archive's manifest.json is not JSON");
  }
  const parsed = PieceManifestSchema.safeParse(archived);
  if (!parsed.success) throw invalid(`the archive's manifest.json: ${formatIssues(parsed.error.issues)}`);
  if (JSON.stringify(normalised(parsed.data)) !== JSON.stringify(normalised(manifest))) {
    throw invalid("the manifest sent differs from the archive's manifest.json");
  }
}

function checkLoadedMatches(manifest: PieceManifest, loaded: LoadedPiece): void {
  if (loaded.piece.name !== manifest.name || loaded.piece.version !== manifest.version) {
    throw invalid(
      `the module's piece is ${loaded.piece.name}@${loaded.piece.version}, the manifest says ${manifest.name}@${manifest.version}`,
    );
  }
  const same = (a: readonly string[], b: readonly string[]) =>
    [...a].sort().join(',') === [...b].sort().join(',');
  if (
    !same(
      loaded.actions.map((a) => a.name),
      manifest.actions,
    ) ||
    !same(loaded.triggers, manifest.triggers)
  ) {
    throw invalid("the module's actions and triggers differ from the manifest's");
  }
}

function normalised(manifest: PieceManifest): PieceManifest {
  return { ...manifest, actions: [...manifest.actions].sort(), triggers: [...manifest.triggers].sort() };
}

function exists(id: string, had: string, got: string): FlowboxError {
  return new FlowboxError(
    'PIECE_VERSION_EXISTS',
    `${id} is already published with other content (sha256 ${had}, this archive ${got}); publish it as a new version`,
  );
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_PIECE', message);
}
