import type { ManagedProcess } from '@flowbox/local-services';
import type { Logger } from '@flowbox/node-kit';
import { judgeDeath } from './death-judge.ts';
import type { RestartPolicy } from './restart-policy.ts';

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
      const delayMs = judgeDeath({ ...options, exit, deaths, now: now() });
      if (delayMs === null) return;
      timer = setTimeout(() => {
        if (stopping) return;
        current = options.start();
        options.onRestart?.(current);
        watch(current);
      }, delayMs);
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
