import { createLogger, onShutdownSignal } from '@flowbox/node-kit';
import { loadConfig } from './env.ts';
import { createWorker } from './worker.ts';

function main(): void {
  const config = loadConfig(process.env);
  const logger = createLogger({ name: 'worker', level: config.logLevel });
  const worker = createWorker(config, logger);
  onShutdownSignal(logger, () => worker.close());
  worker.start();
}

main();
