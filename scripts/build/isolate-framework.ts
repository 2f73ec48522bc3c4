import { join } from 'node:path';
import { build } from 'esbuild';
import { zodEnglishOnly } from './zod-english-only.ts';

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
    plugins: [zodEnglishOnly],
    write: false,
    logLevel: 'warning',
  });
  const [output] = result.outputFiles;
  if (output === undefined || result.outputFiles.length !== 1) {
    throw new Error('the isolate framework must build to one file');
  }
  return output.contents;
}
