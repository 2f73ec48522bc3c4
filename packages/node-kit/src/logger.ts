import { type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger } from 'pino';

/** A structured JSON logger for one process; children carry `runId`, `jobId`, `step`. */
export function createLogger(
  options: { name: string; level: string },
  destination?: NodeJS.WritableStream,
): Logger {
  const pinoOptions: LoggerOptions = {
    name: options.name,
    level: options.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination);
}
