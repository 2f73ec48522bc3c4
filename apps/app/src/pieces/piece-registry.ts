import { createHash } from 'node:crypto';
import { FlowboxError, formatIssues, type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import { type ArchiveFiles, checkPieceArchive } from './piece-archive-check.ts';
import { type LoadedPiece, loadCheckPiece } from './piece-load-check.ts';
import type { LoadCheckIsolation } from './piece-load-sandbox.ts';
import { latestVersion } from './piece-versions.ts';
import type { PieceRecord, PiecesRepository, PieceUse } from './pieces-repository.ts';
import type { PublishGate } from './publish-gate.ts';

/** Names users may not publish under, besides the built-in pieces' own: kept for built-ins to come. */
export const RESERVED_PIECE_PREFIX = 'flowbox-';

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

  /**
   * `version` if given, else the latest; undefined when the piece or that version is not
   * published, or is yanked: nothing new pins a yanked version.
   */
  resolve(name: string, version?: string): PieceRecord | undefined {
    const wanted = version ?? latestVersion(this.versions(name));
    const record = wanted === undefined ? undefined : this.#byName.get(name)?.get(wanted);
    return record?.yankedAt === null ? record : undefined;
  }

  /** The versions that may be pinned (published, not yanked). */
  versions(name: string): string[] {
    return [...(this.#byName.get(name)?.values() ?? [])]
      .filter((r) => r.yankedAt === null)
      .map((r) => r.version);
  }

  isYanked(name: string, version: string): boolean {
    return (this.#byName.get(name)?.get(version)?.yankedAt ?? null) !== null;
  }
}

export interface PieceRegistryDeps {
  pieces: PiecesRepository;
  storage: ObjectStorage;
  maxArchiveBytes: number;
  maxUnpackedBytes: number;
  gate: PublishGate;
  /** The built-in pieces' names (built-in-pieces.ts): only the app publishes under them. */
  reservedNames: ReadonlySet<string>;
  /** Where the load check runs (decided once, on first use: it starts a test sandbox). */
  loadCheck: () => LoadCheckIsolation;
}

/**
 * The piece registry: publishing checks a piece (manifest, archive unpacked as a worker unpacks
 * it, its module loaded in a child process), stores its archive in S3 under its sha256 and
 * records the version, which is immutable from then on; a version can be yanked, never changed.
 * The built-in pieces are published through it at every start too, the only publishes under
 * their names and the `flowbox-` prefix.
 */
export class PieceRegistry {
  readonly #deps: PieceRegistryDeps;

  constructor(deps: PieceRegistryDeps) {
    this.#deps = deps;
  }

  /**
   * Throws PIECE_NAME_RESERVED (unless `builtIn`: one of the app's own pieces), INVALID_PIECE
   * (nothing stored), PIECE_VERSION_EXISTS, PIECE_PUBLISH_BUSY or PIECE_CHECK_UNAVAILABLE
   * (piece-load-check.ts).
   */
  async publish(
    input: { manifest: unknown; archive: Buffer },
    options: { builtIn?: boolean } = {},
  ): Promise<PublishOutcome> {
    const parsed = PieceManifestSchema.safeParse(input.manifest);
    if (!parsed.success) throw invalid(`manifest: ${formatIssues(parsed.error.issues)}`);
    const manifest = parsed.data;
    if (options.builtIn !== true && this.isReserved(manifest.name)) {
      throw new FlowboxError(
        'PIECE_NAME_RESERVED',
        `${manifest.name} is a built-in piece's name or starts with ${RESERVED_PIECE_PREFIX}; only the app publishes under it: name the piece otherwise`,
      );
    }
    return this.#deps.gate.run(() => this.#publish(manifest, input.archive, options.builtIn === true));
  }

  isReserved(name: string): boolean {
    return this.#deps.reservedNames.has(name) || name.startsWith(RESERVED_PIECE_PREFIX);
  }

  async #publish(manifest: PieceManifest, archive: Buffer, builtIn: boolean): Promise<PublishOutcome> {
    const files = await checkPieceArchive(archive, {
      maxBytes: this.#deps.maxArchiveBytes,
      maxUnpackedBytes: this.#deps.maxUnpackedBytes,
    });
    checkArchivedManifest(manifest, files);
    const sha256 = createHash('sha256').update(archive).digest('hex');
    const id = `${manifest.name}@${manifest.version}`;

    // A version is immutable: known content is answered without loading it again.
    const known = (await this.#deps.pieces.get(manifest.name, manifest.version)) ?? undefined;
    if (known !== undefined && known.sha256 !== sha256) throw exists(id, known.sha256, sha256);
    if (known !== undefined && known.nodeBuiltins !== null && known.actions !== null) {
      return { created: false, piece: known };
    }

    const loaded = await loadCheckPiece(manifest, files, { isolation: this.#deps.loadCheck(), builtIn });
    checkLoadedMatches(manifest, loaded);
    if (known !== undefined) {
      await this.#deps.pieces.fillChecks({
        ...known,
        nodeBuiltins: loaded.nodeBuiltins,
        actions: loaded.actions,
      });
      return {
        created: false,
        piece: { ...known, nodeBuiltins: loaded.nodeBuiltins, actions: loaded.actions },
      };
    }
    const archiveKey = objectKeys.pieceArchive(manifest.name, manifest.version, sha256);
    // Stored before it is recorded: a row always has its archive. An upload whose insert then
    // loses a race is the same key and bytes (same sha256), or an orphan nobody references.
    await this.#deps.storage.put(archiveKey, archive, 'application/gzip');
    const inserted = await this.#deps.pieces.insert({
      name: manifest.name,
      version: manifest.version,
      archiveKey,
      sha256,
      sizeBytes: archive.byteLength,
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
    return new PieceIndex(await this.#deps.pieces.list());
  }

  list(): Promise<PieceRecord[]> {
    return this.#deps.pieces.list();
  }

  /**
   * Yanks name@version: flows whose published version pins it keep running it; nothing new can
   * pin it, and the latest never resolves to it. Throws PIECE_NOT_FOUND, or PIECE_IN_USE naming
   * the flows that pin it unless `force`. Yanking a yanked version answers it unchanged.
   */
  async yank(
    name: string,
    version: string,
    force: boolean,
  ): Promise<{ piece: PieceRecord; usedBy: PieceUse[] }> {
    const outcome = await this.#deps.pieces.yank(name, version, force);
    if (outcome.result === 'missing') {
      throw new FlowboxError('PIECE_NOT_FOUND', `no piece ${name}@${version} is published`);
    }
    if (outcome.result === 'in-use') {
      const flows = outcome.usedBy.map((use) => `${use.flowName} (${use.flowId})`).join(', ');
      throw new FlowboxError(
        'PIECE_IN_USE',
        `${name}@${version} is pinned by the published versions of flows ${flows}; they would keep running it: yank with ?force=true, or publish those flows with another version first`,
      );
    }
    return { piece: outcome.piece, usedBy: [] };
  }

  /** Throws PIECE_NOT_FOUND when no version of `name` is published. */
  async versionsOf(name: string): Promise<PieceRecord[]> {
    const versions = await this.#deps.pieces.versionsOf(name);
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
    !same(loaded.triggers, manifest.triggers) ||
    !same(loaded.polling ?? [], manifest.polling ?? [])
  ) {
    throw invalid("the module's actions and triggers (polling ones too) differ from the manifest's");
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
