import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type WrittenFile, writeIfChanged } from '@flowbox/pieces-build';
import { build } from 'esbuild';

/**
 * `apps/app/dist/inspector/`: the run inspector the app serves at /inspector/. Its TypeScript
 * (apps/app/inspector/src, no framework) bundled into one ES module for current browsers, beside
 * the page and its stylesheets as written.
 */
export async function buildInspector(root: string): Promise<WrittenFile[]> {
  const source = join(root, 'apps/app/inspector');
  const dist = join(root, 'apps/app/dist/inspector');
  const result = await build({
    entryPoints: [join(source, 'src/main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  const [script] = result.outputFiles;
  if (script === undefined || result.outputFiles.length !== 1)
    throw new Error('the inspector must build to one file');
  return Promise.all([
    writeIfChanged(join(dist, 'inspector.js'), script.contents),
    writeIfChanged(join(dist, 'index.html'), await readFile(join(source, 'index.html'))),
    writeIfChanged(join(dist, 'inspector.css'), await readFile(join(source, 'inspector.css'))),
    writeIfChanged(join(dist, 'charts.css'), await readFile(join(source, 'charts.css'))),
  ]);
}
