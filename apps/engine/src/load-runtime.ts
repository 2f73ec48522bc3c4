import type * as engineRuntime from './engine-runtime.ts';

export type EngineRuntimeModule = typeof engineRuntime;

/**
 * Loads the engine runtime after `ready` (main.ts). This is the source version (tests, `node
 * src/main.ts`): a plain dynamic import. The bundle swaps this file for
 * load-bundled-runtime.ts (scripts/build/engine-bundle.ts).
 */
export function loadEngineRuntime(): Promise<EngineRuntimeModule> {
  return import('./engine-runtime.ts');
}
