import type { Action } from './action.ts';
import { authInfoOf, type PieceAuthInfo } from './auth.ts';
import type { Trigger } from './trigger.ts';

export interface PieceDefinition {
  name: string;
  version: string;
  /** The credential its actions need, for each action that declares none of its own. */
  auth?: PieceAuthInfo;
  actions?: readonly Action[];
  triggers?: readonly Trigger[];
}

export interface Piece {
  readonly name: string;
  readonly version: string;
  readonly actions: ReadonlyMap<string, Action>;
  readonly triggers: ReadonlyMap<string, Trigger>;
}

export function createPiece(definition: PieceDefinition): Piece {
  return {
    name: definition.name,
    version: definition.version,
    actions: byName(definition.name, 'action', withPieceAuth(definition.actions ?? [], definition.auth)),
    triggers: byName(definition.name, 'trigger', definition.triggers ?? []),
  };
}

function withPieceAuth(actions: readonly Action[], auth: PieceAuthInfo | undefined): readonly Action[] {
  if (auth === undefined) return actions;
  const info = authInfoOf(auth);
  return actions.map((action) => (action.auth === undefined ? { ...action, auth: info } : action));
}

function byName<T extends { name: string }>(
  piece: string,
  kind: string,
  items: readonly T[],
): ReadonlyMap<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    // A duplicate would silently shadow a step's target: fail when the piece is built.
    if (map.has(item.name)) throw new Error(`piece ${piece} declares ${kind} ${item.name} twice`);
    map.set(item.name, item);
  }
  return map;
}
