import { setTimeout as delay } from 'node:timers/promises';
import type { Restartable } from '@flowbox/local-services';
import type { Logger } from '@flowbox/node-kit';
import { judgeDeath } from './death-judge.ts';
import type { RestartPolicy } from './restart-policy.ts';

/**
 * Keeps an embedded store of `pnpm dev` (its redis-server) running as `supervise` keeps the app
 * and worker: when it dies without being asked to, it is started again on the same port and
 * data directory after the policy's backoff, with the same log line; a crash loop is left dead
 * and `onGiveUp` says why. Returns the function that stops supervising (before the store's close).
 */
export function superviseService(options: {
  name: string;
  server: Restartable;
  policy: RestartPolicy;
  logger: Logger;
  onGiveUp: (reason: string) => void;
  now?: () => number;
}): () => void {
  const now = options.now ?? Date.now;
  const deaths: number[] = [];
  let stopping = false;
  void (async () => {
    while (!stopping) {
      const exit = await options.server.exited();
      if (stopping) return;
      const delayMs = judgeDeath({ ...options, exit, deaths, now: now() });
      if (delayMs === null) return;
      await delay(delayMs);
      if (stopping) return;
      // A start that fails leaves the dead process as the latest: the next turn counts it again.
      await options.server.start().catch((error: unknown) => {
        options.logger.warn({ process: options.name, err: error }, `${options.name} did not start again`);
      });
    }
  })();
  return () => {
    stopping = true;
  };
}
