import { createLogger, onShutdownSignal } from '@flowbox/node-kit';
import { createApp, startApp } from './app.ts';
import { loadConfig } from './env.ts';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ name: 'app', level: config.LOG_LEVEL });
  const app = await createApp(config, logger);
  // Drain first (not ready, still serving), then close within the grace period.
  onShutdownSignal(
    logger,
    async () => {
      await app.drain();
      await app.close();
    },
    (config.SHUTDOWN_DRAIN_SECONDS + config.SHUTDOWN_GRACE_SECONDS) * 1000,
  );
  const url = await startApp(app, { seedBenchmarkFlow: config.SEED_BENCHMARK_FLOW });
  // A supervising parent (pnpm dev, tests, the benchmark runner) learns the URL whatever the log level.
  process.send?.({ type: 'ready', url });
}

main().catch((error: unknown) => {
  // Config and unreachable-store errors already say which variable is wrong: no stack.
  const message =
    error instanceof Error && ['ConfigError', 'StoreUnreachableError'].includes(error.name)
      ? error.message
      : error;
  console.error('flowbox app failed to start:', message);
  process.exit(1);
});
