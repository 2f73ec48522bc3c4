import { describeExit, type ManagedProcess } from '@flowbox/local-services';
import type { Logger } from '@flowbox/node-kit';
import { decideRestart, type RestartPolicy } from './restart-policy.ts';

export interface SupervisedProcess {
  readonly name: string;
  /** The process running now (a new one after each restart). */
  current(): ManagedProcess;
  /** Stops restarting it, then stops the process running now. */
  stop(graceMs?: number): Promise<void>;
}

export interface SuperviseOptions {
  name: string;
  /** Starts the process; called again for every restart. */
  start: () => ManagedProcess;
  policy: RestartPolicy;
  logger: Logger;
  /** Called with each new process after a restart. */
  onRestart?: (process: ManagedProcess) => void;
  /** Called once when the process crash-loops and is left dead. */
  onGiveUp: (reason: string) => void;
  now?: () => number;
}

/**
 * Keeps one process of a local stack running: when it dies without being asked to, it is started
 * again after the policy's backoff, with a log line saying how it died; when it crash-loops it is
 * left dead and `onGiveUp` says why.
 */
export function supervise(options: SuperviseOptions): SupervisedProcess {
  const now = options.now ?? Date.now;
  const deaths: number[] = [];
  let current = options.start();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const watch = (process: ManagedProcess) => {
    void process.exited.then((exit) => {
      if (stopping) return;
      deaths.push(now());
      const how = describeExit(exit);
      const decision = decideRestart(deaths, options.policy);
      if (!decision.restart) {
        options.logger.error(
          { process: options.name, exit: how, reason: decision.reason },
          `${options.name} died (${how}) and is crash-looping: ${decision.reason}; not restarting it`,
        );
        options.onGiveUp(decision.reason);
        return;
      }
      options.logger.warn(
        { process: options.name, exit: how, restartInMs: decision.delayMs },
        `${options.name} died (${how}); restarting it in ${decision.delayMs} ms`,
      );
      timer = setTimeout(() => {
        if (stopping) return;
        current = options.start();
        options.onRestart?.(current);
        watch(current);
      }, decision.delayMs);
    });
  };
  watch(current);

  return {
    name: options.name,
    current: () => current,
    async stop(graceMs) {
      stopping = true;
      clearTimeout(timer);
      await current.stop('SIGTERM', graceMs);
    },
  };
}
