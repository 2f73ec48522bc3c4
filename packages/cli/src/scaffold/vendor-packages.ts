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
 * registry packages (zod, esbuild) left as dependencies.
 */
export interface VendoredPackage {
  /** The folder under `vendor/`. */
  dir: string;
  name: string;
  /** Registry dependencies, by name (versions come from this checkout's lockfile). */
  dependencies: string[];
  /** The workspace module to bundle. */
  entry: string;
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
    dependencies: ['zod'],
    entry: moduleFile('@flowbox/pieces-framework'),
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

/** Writes every vendored package under `<vendorDir>/<dir>`. */
export async function writeVendoredPackages(
  vendorDir: string,
  versions: ReadonlyMap<string, string>,
): Promise<void> {
  await Promise.all(
    VENDORED_PACKAGES.map((pkg) => writeVendoredPackage(join(vendorDir, pkg.dir), pkg, versions)),
  );
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
  const result = await build({
    entryPoints: [pkg.entry],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    external: pkg.dependencies,
    banner: pkg.bin === undefined ? {} : { js: '#!/usr/bin/env node' },
    write: false,
    logLevel: 'warning',
  });
  await mkdir(out, { recursive: true });
  await writeFile(join(out, file), result.outputFiles?.[0]?.contents ?? '', { mode: 0o755 });
  const manifest: Record<string, unknown> = {
    name: pkg.name,
    version: source.version,
    private: true,
    type: 'module',
    dependencies: Object.fromEntries(pkg.dependencies.map((name) => [name, mustVersion(versions, name)])),
  };
  if (pkg.types) {
    const types = emitDeclarations(pkg.entry, (pkg.inlined ?? []).map(moduleFile));
    for (const [path, text] of types.files) {
      await mkdir(dirname(join(out, 'types', path)), { recursive: true });
      await writeFile(join(out, 'types', path), text);
    }
    manifest.exports = { '.': { types: `./types/${types.entry}`, default: './index.mjs' } };
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
