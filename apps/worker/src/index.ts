/**
 * The flowbox worker: a concurrency-1 process that polls the app over socket.io, provisions
 * each job from its disk cache, runs it on a warm or cold engine and reports the result with
 * its latency anatomy.
 */

export * from './cache/cache-layout.ts';
export * from './connection/app-connection.ts';
export * from './engines/cold-engine-supply.ts';
export * from './engines/engine-install.ts';
export * from './engines/engine-process.ts';
export * from './engines/engine-sandbox.ts';
export * from './engines/engine-supply.ts';
export * from './engines/provisioner.ts';
export * from './engines/warm-engine-supply.ts';
export * from './env.ts';
export * from './jobs/job-runner.ts';
export * from './worker.ts';
