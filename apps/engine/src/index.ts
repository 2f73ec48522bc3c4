/**
 * The flowbox engine: the child process (`main.ts`, built into `dist/engine.mjs` and exported as
 * `@flowbox/engine/bundle`) a worker forks to execute flows, and its building blocks for tests.
 */
export * from './code-runner.ts';
export * from './engine.ts';
export * from './flow-bundle-loader.ts';
export * from './flow-executor.ts';
export * from './http-client.ts';
export * from './ipc-channel.ts';
export * from './ipc-port.ts';
export * from './isolated-vm-runner.ts';
export * from './node-vm-runner.ts';
export * from './piece-loader.ts';
export * from './piece-registry.ts';
export * from './template.ts';
