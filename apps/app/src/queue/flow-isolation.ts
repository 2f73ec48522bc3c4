import type { RunIsolation } from '@flowbox/protocol';
import type { PieceRecord } from '../pieces/pieces-repository.ts';
import { isTrusted, type TrustedPiece } from '../pieces/trusted-pieces.ts';

/**
 * The isolation a flow version's pieces allow, for its jobs (DispatchedJob.isolation), from what
 * the registry recorded at publish: `isolate` when none imports a Node built-in; `process` when
 * one does (or was published before imports were recorded) and TRUSTED_PIECES does not list it;
 * `shared` when every such piece is listed. Decided once per flow version (the dispatcher keeps
 * it with the bundle), so a job pays a field read.
 */
export function flowIsolation(
  pieces: ReadonlyArray<Pick<PieceRecord, 'name' | 'version' | 'nodeBuiltins'>>,
  trusted: readonly TrustedPiece[],
): RunIsolation {
  const needNode = pieces.filter((piece) => piece.nodeBuiltins === null || piece.nodeBuiltins.length > 0);
  if (needNode.length === 0) return 'isolate';
  return needNode.every((piece) => isTrusted(trusted, piece)) ? 'shared' : 'process';
}
