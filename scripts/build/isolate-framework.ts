import { join } from 'node:path';
import { zodEnglishOnly } from '@flowbox/pieces-build';
import { build, type Plugin } from 'esbuild';

/**
 * The script a run's isolate starts from (apps/engine/src/isolate/inside/entry.ts): one
 * classic script, no module syntax and no Node built-in, since an isolate snapshot holds
 * scripts and a run's isolate has nothing of Node. Built first; the engine bundle embeds it.
 */
export async function buildIsolateFramework(root: string): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [join(root, 'apps/engine/src/isolate/inside/entry.ts')],
    bundle: true,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2024',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    plugins: [zodEnglishOnly, sideEffectFree(join(root, 'packages/protocol/src'))],
    write: false,
    logLevel: 'warning',
  });
  const [output] = result.outputFiles;
  if (output === undefined || result.outputFiles.length !== 1) {
    throw new Error('the isolate framework must build to one file');
  }
  return output.contents;
}

/**
 * The protocol's modules only define schemas and functions: marked free of side effects, what
 * the isolate does not use of them (most schemas) is left out, which keeps the snapshot, and
 * so every run's isolate, small.
 */
function sideEffectFree(dir: string): Plugin {
  return {
    name: 'side-effect-free',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'side-effect-free') return undefined;
        const resolved = await builder.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'side-effect-free',
        });
        return resolved.path.startsWith(dir) ? { ...resolved, sideEffects: false } : undefined;
      });
    },
  };
}
