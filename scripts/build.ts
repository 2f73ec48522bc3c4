/**
 * `pnpm build`: the engine bundle, one archive per piece package and the run inspector, with esbuild. Run before
 * `pnpm dev` and `pnpm test`. Unchanged outputs are not rewritten, so a second build changes
 * no file and every hash stays the same.
 */
import { relative, resolve } from 'node:path';
import { buildEngineBundle } from './build/engine-bundle.ts';
import { buildInspector } from './build/inspector-bundle.ts';
import { buildPieceArchive, findPiecePackages } from './build/piece-archive.ts';

async function main(): Promise<void> {
  const started = performance.now();
  const root = resolve(import.meta.dirname, '..');
  const pieceDirs = await findPiecePackages(root);
  const [engine, inspector, ...pieces] = await Promise.all([
    buildEngineBundle(root),
    buildInspector(root),
    ...pieceDirs.map(async (dir) => (await buildPieceArchive(dir)).written),
  ]);
  for (const file of [...(engine ?? []), ...(inspector ?? []), ...pieces.flat()]) {
    const line = {
      path: relative(root, file.path),
      bytes: file.bytes,
      sha256: file.sha256,
      changed: file.changed,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  process.stdout.write(
    `${JSON.stringify({ msg: 'build done', ms: Math.round(performance.now() - started) })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `build failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
