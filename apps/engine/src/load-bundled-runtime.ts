import type { EngineRuntimeModule } from './load-runtime.ts';

/** Where the runtime sits in `engine.mjs`: a base64 comment at the end (scripts/build/engine-bundle.ts). */
export const RUNTIME_PAYLOAD_START = '/*flowbox-engine-runtime:base64\n';
export const RUNTIME_PAYLOAD_END = '\n*/\n';

/**
 * The bundle's version of load-runtime.ts: the runtime rides in a trailing comment of
 * `engine.mjs`, which V8 skips almost for free (lazily wrapped code still costs a parse and
 * ~1,000 export getters at start, README). It is imported back as `engine.mjs?runtime` through
 * a one-off load hook, so its imports (isolated-vm) resolve from the bundle's folder and Node's
 * compile cache covers it.
 */
export async function loadEngineRuntime(): Promise<EngineRuntimeModule> {
  // Not `import` statements: the ESM wrappers of built-in modules cost boot time this avoids.
  const { readFile } = process.getBuiltinModule('node:fs/promises');
  const { registerHooks } = process.getBuiltinModule('node:module');
  const bundle = await readFile(new URL(import.meta.url), 'latin1');
  const start = bundle.lastIndexOf(RUNTIME_PAYLOAD_START);
  const end = bundle.lastIndexOf(RUNTIME_PAYLOAD_END);
  if (start < 0 || end < start) throw new Error(`${import.meta.url} holds no engine runtime`);
  const source = Buffer.from(bundle.slice(start + RUNTIME_PAYLOAD_START.length, end), 'base64').toString(
    'utf8',
  );
  const url = `${import.meta.url}?runtime`;
  const hooks = registerHooks({
    load: (target, context, next) =>
      target === url ? { format: 'module', source, shortCircuit: true } : next(target, context),
  });
  try {
    return (await import(url)) as EngineRuntimeModule;
  } finally {
    hooks.deregister();
  }
}
