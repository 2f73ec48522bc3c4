import type { Action, Piece, Trigger } from '@flowbox/pieces-framework';
import { FlowboxError } from '@flowbox/protocol';

/** Finds the piece code a step names among one run's pieces; an unknown name fails the step. */
export interface RunPieces {
  action(piece: string, action: string): Action;
  /** `name@version`: the key its actions' compiled input validators are kept by. */
  key(piece: string): string;
  trigger(piece: string, trigger: string): Trigger;
}

export function createRunPieces(pieces: readonly Piece[]): RunPieces {
  const byName = new Map<string, Piece>();
  for (const piece of pieces) {
    if (byName.has(piece.name))
      throw new FlowboxError('PROVISION_FAILED', `piece ${piece.name} is provided twice`);
    byName.set(piece.name, piece);
  }
  const piece = (name: string): Piece => {
    const found = byName.get(name);
    if (found === undefined) throw new FlowboxError('STEP_FAILED', `unknown piece '${name}'`);
    return found;
  };
  return {
    key(pieceName) {
      const found = piece(pieceName);
      return `${found.name}@${found.version}`;
    },
    action(pieceName, actionName) {
      const action = piece(pieceName).actions.get(actionName);
      if (action === undefined) {
        throw new FlowboxError('STEP_FAILED', `piece '${pieceName}' has no action '${actionName}'`);
      }
      return action;
    },
    trigger(pieceName, triggerName) {
      const trigger = piece(pieceName).triggers.get(triggerName);
      if (trigger === undefined) {
        throw new FlowboxError('STEP_FAILED', `piece '${pieceName}' has no trigger '${triggerName}'`);
      }
      return trigger;
    },
  };
}
