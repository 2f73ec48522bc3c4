import { describeExit, type ProcessExit } from '@flowbox/local-services';
import type { Logger } from '@flowbox/node-kit';
import { decideRestart, type RestartPolicy } from './restart-policy.ts';

/**
 * Counts a supervised process's death, says in one log line what happens next, and returns
 * after how many ms to start it again, or null when it crash-loops (`onGiveUp` is told why).
 * One judge for the app and worker (supervised-process.ts) and the stores (supervised-service.ts).
 */
export function judgeDeath(options: {
  name: string;
  exit: ProcessExit;
  deaths: number[];
  now: number;
  policy: RestartPolicy;
  logger: Logger;
  onGiveUp: (reason: string) => void;
}): number | null {
  options.deaths.push(options.now);
  const how = describeExit(options.exit);
  const decision = decideRestart(options.deaths, options.policy);
  if (!decision.restart) {
    options.logger.error(
      { process: options.name, exit: how, reason: decision.reason },
      `${options.name} died (${how}) and is crash-looping: ${decision.reason}; not restarting it`,
    );
    options.onGiveUp(decision.reason);
    return null;
  }
  options.logger.warn(
    { process: options.name, exit: how, restartInMs: decision.delayMs },
    `${options.name} died (${how}); restarting it in ${decision.delayMs} ms`,
  );
  return decision.delayMs;
}
