import type { Logger } from 'pino';

/**
 * Calls `close` once on SIGTERM or SIGINT and exits 0 when it resolves (1 when it throws or
 * takes longer than `graceMs`). Returns a function that removes the handlers.
 */
export function onShutdownSignal(logger: Logger, close: () => Promise<void>, graceMs = 10_000): () => void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => {
        logger.info('shut down cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
