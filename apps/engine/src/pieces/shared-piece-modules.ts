import * as piecesFramework from '@flowbox/pieces-framework';

/**
 * The modules piece archives leave out and take from the engine (packages/pieces-build/src/piece-archive.ts):
 * the engine has them loaded already (in its startup snapshot, or its bundle), so a piece's own
 * code is all a piece costs to load. Keyed by the bare specifier a piece imports.
 *
 * Plain copies of the namespaces, made at import (so in the snapshot): the bundle's namespace
 * objects give each export through a getter of its own, which a fresh engine's first piece import
 * (reexport below) would go through one by one. zod is not shared: a piece declares its inputs
 * with the framework's `Property` builders, and one that uses zod for itself bundles it.
 */
export const SHARED_PIECE_MODULES: Readonly<Record<string, object>> = {
  '@flowbox/pieces-framework': { ...piecesFramework },
};

const SCHEME = 'flowbox-engine:';
// Where the generated module reads the engine's object from; a piece can reach it, but a piece
// runs as engine code anyway and could reach any of the engine's objects.
const HOLDER = Symbol.for('flowbox.engine.shared-piece-modules');

/**
 * Resolves a piece's `import … from '@flowbox/pieces-framework'` to the engine's own module, for
 * `import()` and `require()` alike, through an in-thread module hook. Called by the piece
 * loader when it is made, never at import: hooks are process state, not snapshot state. Once
 * per process: the holder on the global says it is done.
 */
export function shareModulesWithPieces(): void {
  if (Object.hasOwn(globalThis, HOLDER)) return;
  Object.defineProperty(globalThis, HOLDER, { value: SHARED_PIECE_MODULES });
  process.getBuiltinModule('node:module').registerHooks({
    resolve: (specifier, context, next) =>
      Object.hasOwn(SHARED_PIECE_MODULES, specifier)
        ? { url: `${SCHEME}${specifier}`, format: 'module', shortCircuit: true }
        : next(specifier, context),
    load: (url, context, next) =>
      url.startsWith(SCHEME)
        ? { format: 'module', source: reexport(url.slice(SCHEME.length)), shortCircuit: true }
        : next(url, context),
  });
}

/**
 * An ES module whose exports are the engine module's own enumerable names, as a namespace has
 * (a name may be a reserved word such as `catch`, hence `export { _0 as "catch" }`).
 */
function reexport(specifier: string): string {
  const target = SHARED_PIECE_MODULES[specifier] ?? {};
  const names = Object.keys(target);
  const holder = `globalThis[Symbol.for(${JSON.stringify(HOLDER.description)})][${JSON.stringify(specifier)}]`;
  const lines = [`const m = ${holder};`];
  names.forEach((name, index) => {
    lines.push(`const _${index} = m[${JSON.stringify(name)}];`);
  });
  const exported = names.map((name, index) => `_${index} as ${JSON.stringify(name)}`);
  if (exported.length > 0) lines.push(`export { ${exported.join(', ')} };`);
  return lines.join('\n');
}
