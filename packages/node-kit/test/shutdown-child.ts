// A supervised process as pnpm dev starts one: it says ready over IPC, then waits to be stopped.
import { createLogger } from '../src/logger.ts';
import { onShutdownSignal } from '../src/shutdown.ts';

// `hang`: its close never finishes, so only the grace period (1 s) ends it; `hang-long`: the
// same with a grace period longer than any test, so only a second signal can end it.
const hang = process.argv.includes('hang') || process.argv.includes('hang-long');
const graceMs = process.argv.includes('hang-long') ? 120_000 : hang ? 1_000 : 10_000;
const logger = createLogger({ name: 'shutdown-child', level: 'silent' });
const keepAlive = setInterval(() => {}, 60_000);
onShutdownSignal(
  logger,
  async () => {
    if (process.connected) process.send?.({ type: 'closing' });
    if (hang) await new Promise(() => {});
    clearInterval(keepAlive);
  },
  graceMs,
);
process.send?.({ type: 'ready' });
