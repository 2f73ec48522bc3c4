import type { FlowResponse } from '@flowbox/protocol';

export type PieceLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Writes a structured log line for the step; the engine forwards it to the worker. */
export type PieceLog = (level: PieceLogLevel, msg: string, data?: Record<string, unknown>) => void;

/** What an action sees of the run it is part of. */
export interface ActionContext {
  readonly runId: string;
  readonly stepName: string;
  /** Sends the flow's response to the sync webhook caller (through the app). */
  respond(response: FlowResponse): Promise<void>;
  log: PieceLog;
}

/** What a trigger sees of the run it starts. */
export interface TriggerContext {
  readonly runId: string;
  readonly stepName: string;
  log: PieceLog;
}
