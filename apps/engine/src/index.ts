/**
 * The flowbox engine: the child process (`main.ts`, exported as `@flowbox/engine/main`) a
 * worker forks to execute flows, and its building blocks for in-process use and tests.
 */
export * from './code-runner.ts';
export * from './engine.ts';
export * from './flow-executor.ts';
export * from './http-client.ts';
export * from './ipc-channel.ts';
export * from './piece-registry.ts';
export * from './template.ts';
