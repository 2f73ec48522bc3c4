/** Test helpers shared by the engine's and the worker's tests (`@flowbox/engine/testing`). */
export * from './artifacts.ts';
export * from './fake-app-server.ts';
export * from './fixtures.ts';
export * from './run-soak.ts';
