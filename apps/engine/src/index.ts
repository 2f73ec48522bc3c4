/**
 * The flowbox engine: the child process (`main.ts`, built into `dist/engine.mjs` and exported as
 * `@flowbox/engine/bundle`) a worker forks to execute flows, and its building blocks for tests.
 */
export * from './code-steps/code-runner.ts';
export * from './code-steps/isolated-vm-runner.ts';
export * from './code-steps/node-vm-runner.ts';
export * from './engine.ts';
export * from './flows/flow-bundle-loader.ts';
export * from './flows/flow-executor.ts';
export * from './flows/flow-executor-deps.ts';
export * from './flows/run-log.ts';
export * from './host/app-client.ts';
export * from './host/http-client.ts';
export * from './host/ipc-app-client.ts';
export * from './host/ipc-channel.ts';
export * from './host/ipc-port.ts';
export * from './host/log-uploader.ts';
export * from './pieces/piece-loader.ts';
export * from './pieces/run-pieces.ts';
export * from './steps/template.ts';
