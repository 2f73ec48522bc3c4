/**
 * The flowbox worker: a concurrency-1 process that polls the app over socket.io, runs each
 * job on a forked engine and reports the result with its timings.
 */
export * from './app-connection.ts';
export * from './engine-process.ts';
export * from './engine-supply.ts';
export * from './env.ts';
export * from './job-runner.ts';
export * from './worker.ts';
