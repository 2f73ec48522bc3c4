import type { PieceLog } from '@flowbox/pieces-framework';
import type { ConsoleLine } from '@flowbox/protocol';

/** A step's kept lines (a code step's console, a piece's `ctx.log`); the rest is counted, not kept. */
export const CONSOLE_MAX_BYTES = 32 * 1024;

const LEVELS = new Set<ConsoleLine['level']>(['debug', 'info', 'log', 'warn', 'error']);

/** The lines one step keeps for its record, within CONSOLE_MAX_BYTES; none once it is closed. */
export interface StepLines {
  /** `level` and `message` as the sandbox or the piece gave them: a non-string message is dropped. */
  add(level: unknown, message: unknown): void;
  /** The lines in order, the last one saying how much was dropped past the cap. */
  lines(): ConsoleLine[];
  close(): void;
}

export function createStepLines(): StepLines {
  const kept: ConsoleLine[] = [];
  let keptBytes = 0;
  let droppedBytes = 0;
  let closed = false;
  return {
    add(level, message) {
      if (closed || typeof message !== 'string') return;
      const size = Buffer.byteLength(message);
      if (keptBytes + size > CONSOLE_MAX_BYTES) {
        droppedBytes += size;
        return;
      }
      keptBytes += size;
      kept.push({
        level: LEVELS.has(level as ConsoleLine['level']) ? (level as ConsoleLine['level']) : 'log',
        message,
      });
    },
    lines() {
      if (droppedBytes === 0) return [...kept];
      return [...kept, { level: 'warn', message: `[${droppedBytes} more bytes of console output dropped]` }];
    },
    close() {
      closed = true;
    },
  };
}

/**
 * A piece's `ctx.log(level, msg, data)` as a line of its step: the framework's levels mapped to a
 * console's (`trace` is `debug`, `fatal` is `error`), the data after the message as JSON.
 */
export function pieceLogLine(level: unknown, msg: unknown, data?: unknown): ConsoleLine {
  let message = String(msg);
  if (typeof data === 'object' && data !== null && Object.keys(data).length > 0) {
    try {
      message = `${message} ${JSON.stringify(data)}`;
    } catch {
      // Data JSON cannot hold (a cycle, a BigInt): the message alone, as the engine's log has it.
    }
  }
  return { level: PIECE_LEVELS[String(level)] ?? 'info', message };
}

const PIECE_LEVELS: Readonly<Record<string, ConsoleLine['level']>> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'error',
};

/** What a leaf reports (a LeafOutcome): the kept lines go in its `logs`. */
interface WithLogs {
  logs?: ConsoleLine[];
}

/**
 * A piece step's `ctx.log` in the engine (shared and process isolation): each line goes to the
 * engine's log, as it always has, and is kept in the step's `logs` (`keep`) while the step runs.
 */
export function openPieceLog(forward: PieceLog): {
  log: PieceLog;
  keep<T extends WithLogs>(outcome: T): T;
} {
  const lines = createStepLines();
  return {
    log(level, msg, data) {
      const line = pieceLogLine(level, msg, data);
      lines.add(line.level, line.message);
      forward(level, msg, data);
    },
    keep(result) {
      lines.close();
      const kept = lines.lines();
      return kept.length > 0 ? { ...result, logs: [...(result.logs ?? []), ...kept] } : result;
    },
  };
}
