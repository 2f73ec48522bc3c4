import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import v8 from 'node:v8';
import * as runtime from './engine-runtime.ts';
import { warmUpSchemas } from './snapshot-warm-up.ts';
import { startEngine } from './start-engine.ts';

/**
 * The engine as a V8 startup snapshot (`engine-snapshot.cjs`, built into a blob by the worker:
 * apps/worker/src/engines/engine-snapshot.ts). `node --snapshot-blob … --build-snapshot` runs this file
 * once: it evaluates the whole runtime (zod, the protocol schemas, the executor, the code
 * runners' JavaScript) and V8 writes the resulting heap to the blob. An engine started with
 * `node --snapshot-blob <blob>` deserializes that heap instead of loading and compiling the
 * runtime, then runs the function below.
 *
 * What the snapshot holds is code and the objects built at import: no job ever ran in the
 * building process, so no job's data, token or global can be in it. Two things cannot be in a
 * snapshot and load per engine: isolated-vm (a native addon), required from the folder the blob
 * is in since a snapshot's code has no dynamic `import()`, and the pieces (per flow, from the
 * worker's cache; piece-loader.ts requires them too).
 * node:http and node:https cannot be snapshotted either; the build makes them load on first
 * use (scripts/build/engine-bundle.ts).
 */
function main(): void {
  // Started from a blob, the folder is the blob's; run as a plain script, the script's.
  const beside = snapshotBlobPath() ?? process.argv[1] ?? join(process.cwd(), 'engine-snapshot.cjs');
  const requireHere = createRequire(resolve(beside));
  // Read when the engine starts from the blob, never while the blob is built.
  startEngine(() => runtime, {
    relaySocket: process.env.FLOWBOX_RELAY_SOCKET || undefined,
    loadIsolatedVm: async () => ({ default: requireHere('isolated-vm') }),
  });
}

/** The blob this process started from: `--snapshot-blob <path>` in Node's own arguments. */
function snapshotBlobPath(): string | undefined {
  const args = process.execArgv;
  const at = args.indexOf('--snapshot-blob');
  if (at >= 0) return args[at + 1];
  return args.find((arg) => arg.startsWith('--snapshot-blob='))?.slice('--snapshot-blob='.length);
}

if (v8.startupSnapshot.isBuildingSnapshot()) {
  warmUpSchemas();
  v8.startupSnapshot.setDeserializeMainFunction(main);
} else {
  main();
}
