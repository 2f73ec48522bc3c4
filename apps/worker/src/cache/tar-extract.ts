import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FlowboxError } from '@flowbox/protocol';
import { type ReadEntry, extract as tarExtract } from 'tar';

export interface ExtractLimits {
  maxEntries: number;
  maxBytes: number;
}

const DEFAULT_LIMITS: ExtractLimits = { maxEntries: 1_000, maxBytes: 200 * 1024 * 1024 };

/**
 * Unpacks a (gzip'd) tar archive into `dir`, which must be new. Only regular files and
 * directories with relative paths that stay inside `dir` are accepted: one absolute path, `..`
 * segment, link or device refuses the whole archive (PROVISION_FAILED), even though tar would
 * merely skip it, because a piece archive like that was not built by flowbox.
 */
export async function extractArchive(
  archive: Buffer,
  dir: string,
  label: string,
  limits: ExtractLimits = DEFAULT_LIMITS,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const refused: string[] = [];
  const files: string[] = [];
  let entries = 0;
  let bytes = 0;
  const filter = (entryPath: string, entry: ReadEntry | { type?: unknown; size?: number }): boolean => {
    entries += 1;
    bytes += entry.size ?? 0;
    const problem = entryProblem(entryPath, String(entry.type));
    if (problem !== undefined) refused.push(`${JSON.stringify(entryPath)} (${problem})`);
    else if (entry.type === 'File' || entry.type === 'OldFile') files.push(normalise(entryPath));
    return problem === undefined && entries <= limits.maxEntries && bytes <= limits.maxBytes;
  };
  const unpack = tarExtract({ cwd: dir, strict: true, filter, preservePaths: false, noChmod: true });
  try {
    await new Promise<void>((resolve, reject) => {
      unpack.on('error', reject);
      unpack.on('end', () => resolve());
      unpack.end(archive);
    });
  } catch (error) {
    throw new FlowboxError('PROVISION_FAILED', `could not unpack the ${label}: ${String(error)}`, {
      cause: error,
    });
  }
  if (refused.length > 0) {
    throw new FlowboxError('PROVISION_FAILED', `${label}: refused archive entries: ${refused.join(', ')}`);
  }
  if (entries > limits.maxEntries || bytes > limits.maxBytes) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `${label}: archive too large (${entries} entries, ${bytes} bytes; limits ${limits.maxEntries}, ${limits.maxBytes})`,
    );
  }
  return files;
}

function normalise(entryPath: string): string {
  return path.posix.normalize(entryPath).replace(/\/$/, '');
}

function entryProblem(entryPath: string, type: string): string | undefined {
  if (type !== 'File' && type !== 'OldFile' && type !== 'Directory') return `a ${type}`;
  if (entryPath.startsWith('/') || /^[A-Za-z]:/.test(entryPath) || entryPath.includes('\\')) {
    return 'absolute path';
  }
  if (entryPath.split('/').includes('..')) return "contains '..'";
  if (entryPath.includes('\0')) return 'NUL in path';
  return undefined;
}
