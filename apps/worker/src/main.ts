import { createLogger, type Logger, onShutdownSignal } from '@flowbox/node-kit';
import { startTracing, type Tracer } from '@flowbox/tracing';
import { loadConfig } from './env.ts';
import { pidNamespaceUnavailable, sandboxUnavailable } from './sandbox/bubblewrap.ts';
import { createWorker, type Worker } from './worker.ts';

/** A flow still running this close to the end of the grace period is handed back, not cut off. */
const HAND_BACK_MARGIN_MS = 1_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ name: 'worker', level: config.logLevel });
  if (config.executionMode === 'SANDBOXED') {
    // Never a silent fallback to a weaker mode: no sandbox, no worker.
    const unavailable = sandboxUnavailable();
    if (unavailable !== null) {
      logger.fatal(unavailable);
      process.exit(1);
    }
  } else if (config.enginePidNamespace) {
    // The same rule for the token: no namespace, no worker, unless the setting says so.
    const unavailable = pidNamespaceUnavailable();
    if (unavailable !== null) {
      logger.fatal(unavailable);
      process.exit(1);
    }
  } else {
    logger.warn(
      'ENGINE_PID_NAMESPACE=false: engines run beside the worker, and piece code can read its token from /proc',
    );
  }
  // Without an endpoint no OpenTelemetry SDK is loaded at all.
  const tracer: Tracer | null =
    config.tracing === null
      ? null
      : await startTracing({
          ...config.tracing,
          resource: { 'service.instance.id': config.workerId },
          logger: logger.child({ component: 'tracing' }),
        });
  const worker = createWorker(config, logger, tracer);
  const drainMs = Math.max(0, config.shutdownGraceMs - HAND_BACK_MARGIN_MS);
  onShutdownSignal(logger, () => drainOrHandBack(worker, logger, drainMs), config.shutdownGraceMs);
  worker.start().catch((error: unknown) => {
    logger.fatal({ err: error }, 'the worker could not start');
    process.exit(1);
  });
}

/**
 * SIGTERM: stop polling and let the running flow finish and report its result (the drain). A
 * flow that would outlast the grace period is handed back instead: the process exits (0) with
 * the job unreported, which closes its socket, so the app that leased the job re-queues it
 * (RUN_MAX_ATTEMPTS) or fails it WORKER_LOST, and closes its engines' IPC channels, so they exit.
 */
async function drainOrHandBack(worker: Worker, logger: Logger, withinMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, withinMs, 'late');
  });
  const outcome = await Promise.race([worker.close().then(() => 'drained' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    logger.warn({ withinMs }, 'the running flow outlasts the grace period; handing its job back to the app');
  }
}

main().catch((error: unknown) => {
  // Config errors already say which variable is wrong; print them without a stack.
  const message = error instanceof Error && error.name === 'ConfigError' ? error.message : error;
  console.error('flowbox worker failed to start:', message);
  process.exit(1);
});
