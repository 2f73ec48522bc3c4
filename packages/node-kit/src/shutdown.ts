import type { Logger } from 'pino';

export interface ShutdownSignalOptions {
  /**
   * What a second SIGTERM or SIGINT while closing does: `exit` (the default) stops at once, for
   * an impatient supervisor or a second Ctrl-C; `ignore` lets the close go on within `graceMs`,
   * for a process that gets each signal twice (`pnpm dev`'s launcher: the terminal's Ctrl-C
   * reaches it directly and once more through pnpm).
   */
  repeat?: 'exit' | 'ignore';
}

/**
 * Calls `close` once on SIGTERM, SIGINT or SIGHUP and exits 0 when it resolves (1 when it throws,
 * takes longer than `graceMs`, or a second SIGTERM or SIGINT comes while it runs). `graceMs` is
 * each process's SHUTDOWN_GRACE_SECONDS. A process started with an IPC channel (by `pnpm dev`, a
 * test or the benchmark) also shuts down when that channel closes: its supervisor is gone, and a
 * killed supervisor must not leave it running. Returns a function that removes the handlers.
 */
export function onShutdownSignal(
  logger: Logger,
  close: () => Promise<void>,
  graceMs = 10_000,
  options: ShutdownSignalOptions = {},
): () => void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) {
      // Asked again while draining (a second Ctrl-C, an impatient supervisor): stop now.
      if (signal !== 'SIGHUP' && options.repeat !== 'ignore') {
        logger.warn({ signal }, 'asked again to stop; exiting without waiting');
        process.exit(1);
      }
      return;
    }
    closing = true;
    logger.info({ signal, graceMs }, 'shutting down');
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
  const onDisconnect = () => handler('SIGHUP');
  // SIGHUP: the terminal closed, or (pnpm dev) the launcher's parent is gone.
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const signal of signals) process.on(signal, handler);
  if (process.connected) process.on('disconnect', onDisconnect);
  return () => {
    for (const signal of signals) process.off(signal, handler);
    process.off('disconnect', onDisconnect);
  };
}

/** Waits for `work` at most `ms` (a shutdown step's share of the grace); what is left goes on unobserved. */
export async function waitAtMost(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work.catch(() => {}), timeout]);
  clearTimeout(timer);
}
