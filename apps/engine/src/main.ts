import { loadEngineRuntime } from './load-runtime.ts';
import { startEngine } from './start-engine.ts';

/**
 * The engine child process as an ES module (`engine.mjs`). It has no configuration of its own
 * beyond the relay socket of a sandboxed engine: everything a run needs arrives with each
 * `execute` message from the worker that started it.
 *
 * This file imports only the raw IPC port, so the runtime's load is the first thing the
 * process does. How the bundle carries the runtime cheaply: load-bundled-runtime.ts. A worker
 * that could build a V8 startup snapshot starts engines from it instead (snapshot-main.ts).
 */
startEngine(loadEngineRuntime, { relaySocket: process.env.FLOWBOX_RELAY_SOCKET || undefined });
