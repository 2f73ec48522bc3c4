import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import v8 from 'node:v8';
import * as runtime from './engine-runtime.ts';
import { ISOLATED_VM_ADDON_FILE } from './isolated-vm-addon.ts';
import { warmUpSchemas } from './snapshot-warm-up.ts';
import { runWarmUpFlow } from './snapshot-warm-up-run.ts';
import { startEngine } from './start-engine.ts';

/**
 * The engine as a V8 startup snapshot (`engine-snapshot.cjs`; the worker builds the blob,
 * apps/worker/src/engines/engine-snapshot.ts): an engine started from it deserializes the
 * evaluated runtime instead of loading and compiling it, then runs `main`.
 *
 * The snapshot holds code, what was built at import, and the bytecode of what a run calls: the
 * building process runs the benchmark flow once against in-process fakes with constant data
 * (snapshot-warm-up-run.ts). No job ever runs in it and it sees no worker variable, so no job's
 * data, token or global can be in it. Not in it, and loaded per engine: isolated-vm (a
 * native addon, required from the blob's folder: snapshot code has no dynamic `import()`), the
 * pieces, and node:http/https (on first use).
 */
function main(): void {
  // Started from a blob, the folder is the blob's; run as a plain script, the script's.
  const beside = snapshotBlobPath() ?? process.argv[1] ?? join(process.cwd(), 'engine-snapshot.cjs');
  const requireHere = createRequire(resolve(beside));
  // Read when the engine starts from the blob, never while the blob is built.
  startEngine(() => runtime, {
    relaySocket: process.env.FLOWBOX_RELAY_SOCKET || undefined,
    loadIsolatedVm: async () => ({ default: loadIsolatedVm(requireHere) }),
  });
}

/**
 * isolated-vm from the addon binary the worker links beside the blob (isolated-vm-addon.ts),
 * else through its package, whose node-gyp-build would look for that binary again: about 3 ms of
 * CPU in every fresh engine.
 */
function loadIsolatedVm(requireHere: NodeJS.Require): typeof import('isolated-vm') {
  try {
    return (requireHere(`./${ISOLATED_VM_ADDON_FILE}`) as { ivm: typeof import('isolated-vm') }).ivm;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    return requireHere('isolated-vm') as typeof import('isolated-vm');
  }
}

/** The blob this process started from: `--snapshot-blob <path>` in Node's own arguments. */
function snapshotBlobPath(): string | undefined {
  const args = process.execArgv;
  const at = args.indexOf('--snapshot-blob');
  if (at >= 0) return args[at + 1];
  return args.find((arg) => arg.startsWith('--snapshot-blob='))?.slice('--snapshot-blob='.length);
}

/**
 * `crypto.randomUUID` draws from a pool of random bytes it fills on its first call. Filled while
 * the blob is built, the pool would be in the blob and every engine started from it would draw
 * the same UUIDs (the log upload's multipart boundary first). The warm-up run draws past it.
 */
async function withoutUuidPool<T>(run: () => Promise<T>): Promise<T> {
  const crypto = process.getBuiltinModule('node:crypto');
  const pooled = crypto.randomUUID;
  crypto.randomUUID = (options) => pooled({ ...options, disableEntropyCache: true });
  try {
    return await run();
  } finally {
    crypto.randomUUID = pooled;
  }
}

/**
 * Node's timers keep their next deadline in JavaScript (`nextExpiry`, lib/internal/timers.js),
 * which only its libuv timer firing resets. The warm-up clears its timers before they are due (a
 * code step's timeout, the progress report's, a callback's), so the deadline left is the
 * builder's, ~0.4 s into its clock. The snapshot keeps that deadline but not the libuv timer:
 * in an engine from the blob whose clock has passed it, a timer of a duration no pending timer
 * has is never scheduled, so it never fires (a piece's `setTimeout(() => { throw … }, 0)`: the
 * engine neither crashed nor answered, and the worker waited on it). One timer turn after the
 * warm-up lets Node's own handler run with nothing pending, which resets the deadline.
 */
function nextTimerTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

if (v8.startupSnapshot.isBuildingSnapshot()) {
  warmUpSchemas();
  v8.startupSnapshot.setDeserializeMainFunction(main);
  // Node takes the snapshot once the event loop is empty, so after this run has finished.
  void withoutUuidPool(runWarmUpFlow)
    .then(({ result }) => {
      // A warm-up that stopped short would leave the engine's path cold: fail the build instead.
      if (result.outcome.status !== 'SUCCEEDED') {
        throw new Error(`the snapshot warm-up run ended ${JSON.stringify(result.outcome)}`);
      }
    })
    .then(nextTimerTurn);
} else {
  main();
}
