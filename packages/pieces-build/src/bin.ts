import { resolve } from 'node:path';
import { buildPieceArchive } from './piece-archive.ts';

/**
 * `flowbox-piece-build [dir]`: a piece package's own build script (the package `flowbox piece
 * init` writes runs it as `npm run build`), the same build as `pnpm build` and `flowbox piece build`.
 */
const dir = resolve(process.argv[2] ?? '.');
buildPieceArchive(dir).then(
  ({ manifest, written }) => {
    for (const file of written)
      process.stdout.write(`${file.path} ${file.bytes} bytes sha256 ${file.sha256}\n`);
    process.stdout.write(
      `built ${manifest.name}@${manifest.version}: actions ${manifest.actions.join(', ') || '(none)'}\n`,
    );
  },
  (error: unknown) => {
    process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
