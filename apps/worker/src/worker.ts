import type { Logger } from '@flowbox/node-kit';
import { type AppConnection, createAppConnection } from './app-connection.ts';
import { startEngineProcess } from './engine-process.ts';
import { createWarmEngineSupply } from './engine-supply.ts';
import type { WorkerConfig } from './env.ts';
import { createJobRunner, type JobRunner } from './job-runner.ts';

export interface Worker {
  start(): void;
  /** Stops polling, finishes and reports the job in progress, then stops its engine. */
  close(): Promise<void>;
}

/** Builds a concurrency-1 worker: app connection → job runner → (warm) engine supply. */
export function createWorker(config: WorkerConfig, logger: Logger): Worker {
  const engines = createWarmEngineSupply(() => startEngineProcess({ entry: config.engineEntry, logger }));
  const runner: JobRunner = createJobRunner({
    appUrl: config.appUrl,
    workerId: config.workerId,
    logger,
    engines,
  });
  const connection: AppConnection = createAppConnection({
    appUrl: config.appUrl,
    token: config.workerToken,
    workerId: config.workerId,
    logger,
    runJob: (job) => runner.run(job),
  });
  return {
    start() {
      logger.info(
        { workerId: config.workerId, appUrl: config.appUrl, engineEntry: config.engineEntry },
        'worker starting',
      );
      connection.start();
    },
    async close() {
      await connection.close();
      await runner.close();
    },
  };
}
