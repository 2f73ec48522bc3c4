import { join } from 'node:path';
import { sha256Hex, type WrittenFile, writeIfChanged, zodEnglishOnly } from '@flowbox/pieces-build';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { ISOLATE_FRAMEWORK_FILE } from '../../apps/engine/src/isolate/isolate-framework.ts';
import { RUNTIME_PAYLOAD_END, RUNTIME_PAYLOAD_START } from '../../apps/engine/src/load-bundled-runtime.ts';
import { buildIsolateFramework } from './isolate-framework.ts';

/**
 * The engine as one CommonJS script for `node --build-snapshot` (apps/engine/src/snapshot-main.ts),
 * next to engine.mjs in dist/ and in the worker's install folder.
 */
export const SNAPSHOT_ENTRY = 'engine-snapshot.cjs';

/** The only module left outside the bundle: a native addon the worker links beside it. */
export const ENGINE_EXTERNALS = ['isolated-vm'];

/** Boot code over this size means something heavy slipped onto the boot path. */
const MAX_BOOT_BYTES = 16_000;

const COMMON: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  external: ENGINE_EXTERNALS,
  // Whitespace and syntax only: smaller to read and parse, and stack traces keep their names.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
};

/**
 * `apps/engine/dist/engine.mjs`: the engine as one ES module for Node 24, and its sha256 in
 * `engine.mjs.sha256` (sha256sum format). The worker copies it into its cache next to a
 * `node_modules/isolated-vm` link, so the external import resolves from the bundle's folder.
 *
 * Two builds make the one file: the boot code (src/main.ts with load-bundled-runtime.ts in
 * place of load-runtime.ts) and the runtime (src/engine-runtime.ts), which goes at the end
 * as a base64 comment that the boot code imports after `ready`.
 */
export async function buildEngineBundle(root: string): Promise<WrittenFile[]> {
  const src = join(root, 'apps/engine/src');
  const framework = await buildIsolateFramework(root);
  const embedFramework = embeddedIsolateFramework(src, framework);
  const [boot, runtime] = await Promise.all([
    buildOne({ ...COMMON, entryPoints: [join(src, 'main.ts')], plugins: [bundledRuntimeLoader(src)] }),
    buildOne({
      ...COMMON,
      entryPoints: [join(src, 'engine-runtime.ts')],
      plugins: [zodEnglishOnly, embedFramework],
    }),
  ]);
  if (boot.byteLength > MAX_BOOT_BYTES) {
    throw new Error(
      `the engine's boot code is ${boot.byteLength} bytes: something heavy is imported by main.ts`,
    );
  }
  const payload = Buffer.from(runtime).toString('base64');
  const bundle = Buffer.concat([
    boot,
    Buffer.from(`\n${RUNTIME_PAYLOAD_START}${payload}${RUNTIME_PAYLOAD_END}`),
  ]);
  const snapshot = await buildOne({
    ...COMMON,
    format: 'cjs',
    entryPoints: [join(src, 'snapshot-main.ts')],
    plugins: [zodEnglishOnly, embedFramework, loadOnFirstUse(['node:http', 'node:https'])],
  });
  const dist = join(root, 'apps/engine/dist');
  return [
    // Read by the source engine (tests); the bundles hold their own copy.
    await writeIfChanged(join(dist, ISOLATE_FRAMEWORK_FILE), framework),
    await writeIfChanged(join(dist, 'engine.mjs'), bundle),
    await writeIfChanged(join(dist, 'engine.mjs.sha256'), `${sha256Hex(bundle)}  engine.mjs\n`),
    await writeIfChanged(join(dist, SNAPSHOT_ENTRY), snapshot),
    await writeIfChanged(
      join(dist, `${SNAPSHOT_ENTRY}.sha256`),
      `${sha256Hex(snapshot)}  ${SNAPSHOT_ENTRY}\n`,
    ),
  ];
}

/**
 * Built modules Node cannot put in a startup snapshot (`--build-snapshot` aborts on their
 * native handles), replaced by functions that load the module on their first call. Only
 * `request` and `get` are offered: an import of anything else fails the build, not an engine.
 */
function loadOnFirstUse(modules: string[]): Plugin {
  return {
    name: 'load-on-first-use',
    setup(builder) {
      const filter = new RegExp(`^(${modules.map((m) => m.replace('/', '\\/')).join('|')})$`);
      builder.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'load-on-first-use' }));
      builder.onLoad({ filter: /.*/, namespace: 'load-on-first-use' }, (args) => ({
        contents: [
          `const load = () => process.getBuiltinModule(${JSON.stringify(args.path)});`,
          'export const request = (...args) => load().request(...args);',
          'export const get = (...args) => load().get(...args);',
        ].join('\n'),
        loader: 'js',
      }));
    },
  };
}

async function buildOne(options: BuildOptions): Promise<Uint8Array> {
  const result = await build({ ...options, write: false });
  const [output] = result.outputFiles ?? [];
  if (output === undefined || result.outputFiles?.length !== 1) {
    throw new Error(`${String(options.entryPoints)} must build to one file`);
  }
  return output.contents;
}

/** Resolves main.ts's `./load-runtime.ts` to the bundle's loader. */
function bundledRuntimeLoader(src: string): Plugin {
  return {
    name: 'bundled-runtime-loader',
    setup(builder) {
      builder.onResolve({ filter: /^\.\/load-runtime\.ts$/ }, (args) =>
        args.importer === join(src, 'main.ts') ? { path: join(src, 'load-bundled-runtime.ts') } : undefined,
      );
    },
  };
}

/** Resolves the engine's `isolate-framework.ts` to a module holding the built script itself. */
function embeddedIsolateFramework(src: string, framework: Uint8Array): Plugin {
  const loader = join(src, 'isolate/isolate-framework.ts');
  return {
    name: 'embedded-isolate-framework',
    setup(builder) {
      builder.onResolve({ filter: /isolate-framework\.ts$/ }, (args) =>
        join(args.resolveDir, args.path) === loader
          ? { path: loader, namespace: 'isolate-framework' }
          : undefined,
      );
      builder.onLoad({ filter: /.*/, namespace: 'isolate-framework' }, () => ({
        contents: [
          `export const ISOLATE_FRAMEWORK_FILE = ${JSON.stringify(ISOLATE_FRAMEWORK_FILE)};`,
          `const script = ${JSON.stringify(Buffer.from(framework).toString('utf8'))};`,
          'export const loadIsolateFramework = async () => script;',
        ].join('\n'),
        loader: 'js',
      }));
    },
  };
}
