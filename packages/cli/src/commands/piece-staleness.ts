import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { CliError } from '../cli-error.ts';

/**
 * The piece's newest source (`package.json` and every file under `src/`) when it is newer than
 * the built archive, else null. A build that failed leaves the previous archive in `dist/`;
 * publishing it would publish code that is not the sources' (and say "already published" when
 * that build was). Each build sets the archive's mtime, its bytes changed or not.
 */
export async function newerSource(
  dir: string,
  archive: string,
): Promise<{ file: string; changedAt: Date; builtAt: Date } | null> {
  const builtAt = (await stat(archive)).mtime;
  let newest: { file: string; changedAt: Date } | null = null;
  for (const file of [join(dir, 'package.json'), ...(await filesUnder(join(dir, 'src')))]) {
    const changedAt = await stat(file).then(
      (info) => info.mtime,
      () => null,
    );
    if (changedAt !== null && changedAt > builtAt && (newest === null || changedAt > newest.changedAt)) {
      newest = { file: relative(dir, file), changedAt };
    }
  }
  return newest === null ? null : { ...newest, builtAt };
}

/** PIECE_BUILD_STALE unless the archive is at least as new as every source. */
export async function refuseStaleBuild(dir: string, archive: string): Promise<void> {
  const newer = await newerSource(dir, archive);
  if (newer === null) return;
  throw new CliError(
    'PIECE_BUILD_STALE',
    `${relative(dir, archive)} (built ${newer.builtAt.toISOString()}) is older than ${newer.file} (changed ${newer.changedAt.toISOString()}): build it first (\`flowbox piece build\`, or \`flowbox piece publish --build\`); a build that failed leaves the previous archive`,
  );
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}
