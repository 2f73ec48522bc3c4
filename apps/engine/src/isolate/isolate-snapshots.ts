import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonSchema, PieceAuthInfo } from '@flowbox/pieces-framework';
import { FlowboxError } from '@flowbox/protocol';
import type { ExternalCopy } from 'isolated-vm';
import type { IsolatedVm } from '../code-steps/isolated-vm-runner.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { ProvisionedPiece } from '../pieces/piece-loader.ts';
import { pieceScript } from './piece-script.ts';

/** An isolate snapshot: the framework and one set of piece versions, ready to start isolates from. */
export interface IsolateSnapshot {
  /** Sorted `name@version+sha256` of its pieces. */
  readonly key: string;
  readonly blob: ExternalCopy<ArrayBuffer>;
  /** Each piece's `name@version` and its actions' input schemas, which the engine validates with. */
  readonly pieces: ReadonlyMap<string, SnapshotPiece>;
}

export interface SnapshotPiece {
  /** `name@version`: the key its compiled validators are kept by. */
  readonly key: string;
  readonly inputs: Readonly<Record<string, JsonSchema>>;
  /** The credential each action declares, if any (its `ctx.auth`, checked by the engine). */
  readonly auths: Readonly<Record<string, PieceAuthInfo>>;
}

export interface IsolateSnapshots {
  /** The snapshot holding exactly these pieces, built on first use; a piece that cannot load fails. */
  forPieces(pieces: readonly ProvisionedPiece[]): Promise<IsolateSnapshot>;
}

export interface IsolateSnapshotsOptions {
  library(): Promise<IsolatedVm>;
  framework(): Promise<string>;
  log: EngineLog;
  /** Snapshots kept, least recently used dropped first (each is a few MB). */
  maxKept?: number;
}

const DEFAULT_MAX_KEPT = 8;
/** Compiles what every run uses, so the snapshot holds its code (inside/run-runtime.ts). */
const WARM_UP = '__flowbox.warmUp();';

/**
 * One isolate snapshot per set of piece versions (the key: sorted name@version+sha256
 * of the archive's index.mjs), kept in the engine's memory while the engine lives. The worker's
 * disk cache would keep it across engines too, but a sandboxed engine cannot write there, and
 * a build costs one snapshot per engine per flow's pieces (its time is logged).
 */
export function createIsolateSnapshots(options: IsolateSnapshotsOptions): IsolateSnapshots {
  const maxKept = options.maxKept ?? DEFAULT_MAX_KEPT;
  const scripts = new Map<string, Promise<{ sha256: string; code: string }>>();
  const snapshots = new Map<string, Promise<IsolateSnapshot>>();
  let builtins: ReadonlySet<string> | undefined;

  const scriptOf = (piece: ProvisionedPiece) => {
    // A piece directory holds one immutable version: converted once per engine.
    let loading = scripts.get(piece.dir);
    if (loading === undefined) {
      builtins ??= new Set(process.getBuiltinModule('node:module').builtinModules);
      const names = builtins;
      loading = readFile(join(piece.dir, 'index.mjs'), 'utf8').then((source) => ({
        sha256: createHash('sha256').update(source).digest('hex'),
        code: pieceScript(`${piece.name}@${piece.version}`, source, names).code,
      }));
      scripts.set(piece.dir, loading);
      loading.catch(() => scripts.delete(piece.dir));
    }
    return loading;
  };

  const build = async (
    key: string,
    pieces: readonly ProvisionedPiece[],
    codes: readonly string[],
  ): Promise<IsolateSnapshot> => {
    const [ivm, framework] = await Promise.all([options.library(), options.framework()]);
    const started = performance.now();
    let blob: ExternalCopy<ArrayBuffer>;
    try {
      blob = ivm.Isolate.createSnapshot(
        [
          { code: framework, filename: 'file:///flowbox-isolate.js' },
          ...codes.map((code, index) => ({
            code,
            filename: `file:///pieces/${pieces[index]?.name ?? 'piece'}.js`,
          })),
        ],
        WARM_UP,
      );
    } catch (error) {
      throw new FlowboxError(
        'PIECE_NOT_ISOLATABLE',
        `the pieces ${key} cannot load in a run's isolate: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const described = await checkPieces(ivm, blob, pieces);
    const ms = Math.round(performance.now() - started);
    options.log('info', 'built an isolate snapshot', { pieces: key, ms, bytes: blob.copy().byteLength });
    return { key, blob, pieces: described };
  };

  return {
    async forPieces(pieces) {
      const sorted = [...pieces].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const converted = await Promise.all(sorted.map(scriptOf));
      const key = sorted
        .map((piece, index) => `${piece.name}@${piece.version}+${converted[index]?.sha256}`)
        .join(',');
      let snapshot = snapshots.get(key);
      if (snapshot === undefined) {
        snapshot = build(
          key,
          sorted,
          converted.map((script) => script.code),
        );
        snapshot.catch(() => snapshots.delete(key));
      } else snapshots.delete(key);
      // Most recently used last.
      snapshots.set(key, snapshot);
      for (const oldest of snapshots.keys()) {
        if (snapshots.size <= maxKept) break;
        snapshots.get(oldest)?.then(
          (dropped) => dropped.blob.release(),
          () => {},
        );
        snapshots.delete(oldest);
      }
      return snapshot;
    },
  };
}

/**
 * The snapshot's pieces are the ones the job named, as the piece loader checks in shared mode;
 * their actions' input schemas come back with them (read once per snapshot, as JSON).
 */
async function checkPieces(
  ivm: IsolatedVm,
  blob: ExternalCopy<ArrayBuffer>,
  pieces: readonly ProvisionedPiece[],
): Promise<ReadonlyMap<string, SnapshotPiece>> {
  const isolate = new ivm.Isolate({ snapshot: blob, memoryLimit: 128 });
  try {
    const context = await isolate.createContext();
    const json: unknown = await context.eval('__flowbox.describePieces()', { copy: true });
    const found = JSON.parse(String(json)) as {
      name: string;
      version: string;
      inputs: Record<string, JsonSchema>;
      auths?: Record<string, PieceAuthInfo>;
    }[];
    const have = found.map((piece) => `${piece.name}@${piece.version}`).sort();
    const want = pieces.map((piece) => `${piece.name}@${piece.version}`).sort();
    if (have.join(',') !== want.join(',')) {
      throw new FlowboxError(
        'PROVISION_FAILED',
        `the pieces in the cache are ${have.join(', ')}, not ${want.join(', ')}`,
      );
    }
    return new Map(
      found.map((piece) => [
        piece.name,
        { key: `${piece.name}@${piece.version}`, inputs: piece.inputs, auths: piece.auths ?? {} },
      ]),
    );
  } finally {
    isolate.dispose();
  }
}
