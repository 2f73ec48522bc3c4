/**
 * The flowbox worker: a concurrency-1 process that polls the app over socket.io, provisions
 * each job from its disk cache, runs it on a warm or cold engine and reports the result with
 * its latency anatomy.
 */
export * from './app-connection.ts';
export * from './cache-layout.ts';
export * from './cold-engine-supply.ts';
export * from './engine-install.ts';
export * from './engine-process.ts';
export * from './engine-supply.ts';
export * from './env.ts';
export * from './job-runner.ts';
export * from './provisioner.ts';
export * from './warm-engine-supply.ts';
export * from './worker.ts';
