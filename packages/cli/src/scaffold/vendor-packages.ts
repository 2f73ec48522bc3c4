import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import ts from 'typescript';

/**
 * The flowbox packages a scaffolded piece needs, compiled from this checkout into plain
 * packages (ES module + declarations) that the piece depends on as `file:vendor/<dir>`. They are
 * not on any registry, and the workspace's copies are TypeScript sources Node will not load from
 * node_modules; so `piece init` builds them, with their flowbox imports bundled in and only
 * registry packages (zod, esbuild) left as dependencies: the framework's only for the protocol's
 * types in its declarations, the build's for the manifest schema and the bundler.
 */
export interface VendoredPackage {
  /** The folder under `vendor/`. */
  dir: string;
  name: string;
  /** Registry dependencies, by name (versions come from this checkout's lockfile). */
  dependencies: string[];
  /** The workspace module to bundle. */
  entry: string;
  /** Further exports (`./validate`): each a workspace module bundled into `<name>.mjs`. */
  subpaths?: Record<string, string>;
  /** Workspace packages bundled in, whose declarations ship with this package's. */
  inlined?: string[];
  /** Emit declarations (packages the piece's code imports); else the package is a bin. */
  types: boolean;
  bin?: string;
}

export const VENDORED_PACKAGES: readonly VendoredPackage[] = [
  {
    dir: 'pieces-framework',
    name: '@flowbox/pieces-framework',
    // zod for `./validate` (the engine's check) and the protocol's types in the declarations.
    dependencies: ['zod'],
    entry: moduleFile('@flowbox/pieces-framework'),
    subpaths: { validate: moduleFile('@flowbox/pieces-framework/validate') },
    inlined: ['@flowbox/protocol'],
    types: true,
  },
  { dir: 'flow', name: '@flowbox/flow', dependencies: [], entry: moduleFile('@flowbox/flow'), types: true },
  {
    dir: 'pieces-build',
    name: '@flowbox/pieces-build',
    dependencies: ['esbuild', 'zod'],
    entry: join(dirname(moduleFile('@flowbox/pieces-build')), 'bin.ts'),
    types: false,
    bin: 'flowbox-piece-build',
  },
];

function moduleFile(specifier: string): string {
  // createRequire rather than import.meta.resolve: vitest's module runner lacks the latter.
  return createRequire(import.meta.url).resolve(specifier);
}

/** Writes these vendored packages (default: every one) under `<vendorDir>/<dir>`. */
export async function writeVendoredPackages(
  vendorDir: string,
  versions: ReadonlyMap<string, string>,
  packages: readonly VendoredPackage[] = VENDORED_PACKAGES,
): Promise<void> {
  await Promise.all(packages.map((pkg) => writeVendoredPackage(join(vendorDir, pkg.dir), pkg, versions)));
}

async function writeVendoredPackage(
  out: string,
  pkg: VendoredPackage,
  versions: ReadonlyMap<string, string>,
): Promise<void> {
  const source = JSON.parse(await readFile(join(dirname(pkg.entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const file = pkg.bin === undefined ? 'index.mjs' : 'bin.mjs';
  const bundle = async (entry: string, to: string) => {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      external: pkg.dependencies,
      banner: pkg.bin === undefined ? {} : { js: '#!/usr/bin/env node' },
      write: false,
      logLevel: 'warning',
    });
    await writeFile(join(out, to), result.outputFiles?.[0]?.contents ?? '', { mode: 0o755 });
  };
  const subpaths = Object.entries(pkg.subpaths ?? {});
  await mkdir(out, { recursive: true });
  await bundle(pkg.entry, file);
  for (const [name, entry] of subpaths) await bundle(entry, `${name}.mjs`);
  const manifest: Record<string, unknown> = {
    name: pkg.name,
    version: source.version,
    private: true,
    type: 'module',
    dependencies: Object.fromEntries(pkg.dependencies.map((name) => [name, mustVersion(versions, name)])),
  };
  if (pkg.types) {
    const types = emitDeclarations(pkg.entry, [
      ...(pkg.inlined ?? []).map(moduleFile),
      ...subpaths.map(([, entry]) => entry),
    ]);
    for (const [path, text] of types.files) {
      await mkdir(dirname(join(out, 'types', path)), { recursive: true });
      await writeFile(join(out, 'types', path), text);
    }
    const exports: Record<string, { types: string; default: string }> = {
      '.': { types: `./types/${types.entry}`, default: './index.mjs' },
    };
    for (const [name, entry] of subpaths) {
      const declaration = relative(PACKAGES_DIR, entry).replace(/\.ts$/, '.d.ts');
      exports[`./${name}`] = { types: `./types/${declaration}`, default: `./${name}.mjs` };
    }
    manifest.exports = exports;
  } else {
    manifest.bin = { [pkg.bin ?? pkg.dir]: `./${file}` };
  }
  await writeFile(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

function mustVersion(versions: ReadonlyMap<string, string>, name: string): string {
  const found = versions.get(name);
  if (found === undefined) throw new Error(`this checkout's lockfile has no version of ${name}`);
  return found;
}

const PACKAGES_DIR = join(import.meta.dirname, '../../..');

/**
 * Declarations of `entry` and of the workspace modules it reaches, keyed by their path under
 * `packages/` (e.g. `pieces-framework/src/action.d.ts`). Import paths are made loadable from a
 * plain package: `./x.ts` becomes `./x.js` (which TypeScript maps to `x.d.ts`) and
 * `@flowbox/<p>` a relative path to that package's emitted index.
 */
export function emitDeclarations(
  entry: string,
  inlined: string[] = [],
): { entry: string; files: Map<string, string> } {
  const files = new Map<string, string>();
  // Roots, not reached through node_modules: TypeScript emits nothing for an external library.
  const program = ts.createProgram([entry, ...inlined], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: PACKAGES_DIR,
    outDir: '/vendored-types',
    types: ['node'],
    // From the checkout, not from wherever the user runs `piece init`.
    typeRoots: [join(PACKAGES_DIR, '..', 'node_modules', '@types')],
  });
  const result = program.emit(undefined, (fileName, text) => {
    const path = relative('/vendored-types', fileName);
    files.set(path, rewriteSpecifiers(path, text));
  });
  const problems = ts.getPreEmitDiagnostics(program).concat(result.diagnostics);
  if (problems.length > 0) {
    throw new Error(
      ts.formatDiagnostics(problems, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => PACKAGES_DIR,
        getNewLine: () => '\n',
      }),
    );
  }
  return { entry: relative(PACKAGES_DIR, entry).replace(/\.ts$/, '.d.ts'), files };
}

function rewriteSpecifiers(path: string, text: string): string {
  return text.replace(
    /(from |import\()(['"])([^'"]+)\2/g,
    (whole, prefix: string, quote: string, specifier: string) => {
      if (specifier.startsWith('.')) return `${prefix}${quote}${specifier.replace(/\.ts$/, '.js')}${quote}`;
      const workspace = /^@flowbox\/([a-z-]+)$/.exec(specifier);
      if (workspace === null) return whole;
      let target = relative(dirname(path), `${workspace[1]}/src/index.js`);
      if (!target.startsWith('.')) target = `./${target}`;
      return `${prefix}${quote}${target}${quote}`;
    },
  );
}
