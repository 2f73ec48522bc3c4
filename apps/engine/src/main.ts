import { loadEngineRuntime } from './load-runtime.ts';
import { startEngine } from './start-engine.ts';

/**
 * The engine child process as an ES module (`engine.mjs`; snapshot-main.ts is the other way
 * in). No configuration beyond a sandboxed engine's relay socket: a run's needs arrive with
 * each `execute`. It imports only the raw IPC port, so loading the runtime comes first.
 */
startEngine(loadEngineRuntime, { relaySocket: process.env.FLOWBOX_RELAY_SOCKET || undefined });
