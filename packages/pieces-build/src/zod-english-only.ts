import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';

/**
 * zod re-exports every locale (`z.locales`, ~300 kB of the ~600 kB it adds to a bundle) through
 * a namespace object that esbuild cannot tree-shake. Nothing in flowbox switches zod's language,
 * so bundles keep English only. A piece that did switch would fail its build, when the build
 * loads the piece to write its manifest.
 */
export const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[/\\]node_modules[/\\]zod[/\\]/.test(args.importer)
        ? { path: join(args.resolveDir, args.path), namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
