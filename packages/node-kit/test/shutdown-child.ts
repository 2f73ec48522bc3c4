// A supervised process as pnpm dev starts one: it says ready over IPC, then waits to be stopped.
import { createLogger } from '../src/logger.ts';
import { onShutdownSignal } from '../src/shutdown.ts';

const logger = createLogger({ name: 'shutdown-child', level: 'silent' });
const keepAlive = setInterval(() => {}, 60_000);
onShutdownSignal(logger, async () => {
  clearInterval(keepAlive);
});
process.send?.({ type: 'ready' });
