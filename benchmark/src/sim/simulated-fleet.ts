import { createHttpClient } from '@flowbox/engine';
import type { Logger } from '@flowbox/node-kit';
import { type AppConnection, createAppConnection } from '@flowbox/worker';
import { runSimulatedJob } from './simulated-job.ts';

export interface SimulatedFleetOptions {
  /** Worker i connects to appUrls[i % appUrls.length], as `startStack` spreads real workers. */
  appUrls: readonly string[];
  /** One worker token per worker (the app knows workers by their token's subject). */
  tokens: readonly string[];
  serviceMs: number;
  logger: Logger;
}

/**
 * Many workers in one process, each speaking the real worker protocol (the worker's own
 * `createAppConnection`: token, long-poll, results with the next job in the ack) to real apps,
 * with the engine replaced by a fixed service time (simulated-job.ts). For benchmarks only.
 */
export function startSimulatedFleet(options: SimulatedFleetOptions): { close(): Promise<void> } {
  // One keep-alive client for the whole fleet: log uploads reuse sockets.
  const http = createHttpClient();
  const connections: AppConnection[] = options.tokens.map((token, index) => {
    const appUrl = options.appUrls[index % options.appUrls.length];
    if (appUrl === undefined) throw new Error('a simulated fleet needs at least one app URL');
    const workerId = `sim-${index}`;
    let served = 0;
    // Log uploads that follow their results: the worker disconnects once they ended.
    const uploads = new Set<Promise<void>>();
    const connection: AppConnection = createAppConnection({
      appUrl,
      token,
      workerId,
      logger: options.logger.child({ workerId }),
      beforeDisconnect: async () => {
        await Promise.all(uploads);
      },
      runJob: (job) =>
        runSimulatedJob(job, {
          workerId,
          serviceMs: options.serviceMs,
          http,
          callbacks: { call: (callback) => connection.forwardCallback(callback) },
          jobsServed: () => ++served,
          afterResult(upload) {
            uploads.add(upload);
            void upload.finally(() => uploads.delete(upload));
          },
          reportLogFailure: (failure) => connection.reportLogFailure(failure),
        }),
    });
    return connection;
  });
  for (const connection of connections) connection.start();
  return {
    async close() {
      await Promise.allSettled(connections.map((c) => c.close()));
      http.close();
    },
  };
}
