/** The framework script's file name in the engine's build output (scripts/build/isolate-framework.ts). */
export const ISOLATE_FRAMEWORK_FILE = 'isolate-framework.js';

/**
 * The script every run's isolate starts from (inside/entry.ts, bundled): web globals, zod, the
 * pieces framework and the run runtime. This is the source version (tests, `node src/main.ts`),
 * which reads it from `apps/engine/dist` (`pnpm build`); the engine bundle swaps this file for
 * one that holds the script (scripts/build/engine-bundle.ts), so an installed engine needs no
 * file beside it.
 */
export async function loadIsolateFramework(): Promise<string> {
  const { readFile } = process.getBuiltinModule('node:fs/promises');
  return readFile(new URL(`../../dist/${ISOLATE_FRAMEWORK_FILE}`, import.meta.url), 'utf8');
}
