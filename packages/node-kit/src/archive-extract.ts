import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { extract as tarExtract } from 'tar';

export interface ArchiveExtractLimits {
  maxEntries: number;
  /** Unpacked bytes, every entry's size added up. */
  maxBytes: number;
}

/** What a worker unpacks at most; a registry may take less, never more. */
export const ARCHIVE_EXTRACT_LIMITS: ArchiveExtractLimits = {
  maxEntries: 1_000,
  maxBytes: 200 * 1024 * 1024,
};

/** Why an archive was refused: past its limits, an entry, or not a gzip'd tar at all. */
export type ArchiveRefusal = 'limits' | 'entries' | 'format';

/** An archive refused for what it holds (or for not being one); the message names the entry. */
export class ArchiveRefusedError extends Error {
  override readonly name = 'ArchiveRefusedError';
  readonly refusal: ArchiveRefusal;

  constructor(refusal: ArchiveRefusal, message: string, options?: ErrorOptions) {
    super(message, options);
    this.refusal = refusal;
  }
}

/**
 * Unpacks a gzip'd tar into `dir`, streaming to disk, and returns the regular files it wrote
 * (normalised relative paths, each once). The one reader of piece archives: the registry checks
 * an archive by unpacking it with this function, and a worker unpacks it with the same, so pax
 * headers, GNU long names and every other tar rule mean the same at publish as at run.
 *
 * Only regular files and directories with relative paths inside `dir` are taken; one absolute
 * path, `..` segment, link, device, FIFO or contiguous file refuses the whole archive, and so
 * does a layout the disk cannot hold (an entry under a file, a file where a directory is). Past
 * `limits` the unpack stops at once. Throws ArchiveRefusedError.
 */
export async function extractArchive(
  archive: Buffer,
  dir: string,
  limits: ArchiveExtractLimits = ARCHIVE_EXTRACT_LIMITS,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const layout = new Layout();
  const refused: string[] = [];
  let entries = 0;
  let bytes = 0;
  let overLimit: string | undefined;
  const unpack = tarExtract({
    cwd: dir,
    strict: true,
    preservePaths: false,
    noChmod: true,
    filter: (entryPath, entry) => {
      entries += 1;
      bytes += 'size' in entry && typeof entry.size === 'number' ? entry.size : 0;
      if (entries > limits.maxEntries || bytes > limits.maxBytes) {
        overLimit ??= `archive too large: past ${limits.maxEntries} entries or ${limits.maxBytes} unpacked bytes`;
        unpack.abort(new ArchiveRefusedError('limits', overLimit));
        return false;
      }
      const type = 'type' in entry ? String(entry.type) : 'unknown';
      const problem = entryProblem(entryPath, type) ?? layout.add(normalise(entryPath), type);
      if (problem !== undefined) refused.push(`${JSON.stringify(entryPath)} (${problem})`);
      return problem === undefined;
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      unpack.on('error', reject);
      unpack.on('end', () => resolve());
      // In small slices, with backpressure: zlib inflates each write at once, so one write of a
      // whole 100 KB bomb would hold its 95 MiB in memory before the limit could stop it.
      Readable.from(slices(archive), { objectMode: false }).pipe(unpack);
    });
  } catch (error) {
    if (overLimit !== undefined) throw new ArchiveRefusedError('limits', overLimit);
    // A failing disk is this host's fault, not the archive's (a name too long for it is the archive's).
    if (HOST_ERRORS.has(String((error as { code?: unknown } | null)?.code))) throw error;
    const message = error instanceof Error ? error.message : String(error);
    // The temporary directory says nothing to whoever sent the archive.
    throw new ArchiveRefusedError('format', `not a readable gzip'd tar: ${message.replaceAll(dir, '.')}`, {
      cause: error,
    });
  }
  if (overLimit !== undefined) throw new ArchiveRefusedError('limits', overLimit);
  if (refused.length > 0)
    throw new ArchiveRefusedError('entries', `refused archive entries: ${refused.join(', ')}`);
  return layout.files();
}

const HOST_ERRORS = new Set([
  'ENOSPC',
  'EDQUOT',
  'EACCES',
  'EPERM',
  'EROFS',
  'EIO',
  'EMFILE',
  'ENFILE',
  'ENOMEM',
]);

/** Up to about 1,000 times this unpacked per write (zlib's best ratio). */
const SLICE_BYTES = 4 * 1024;

function* slices(archive: Buffer): Generator<Buffer> {
  for (let at = 0; at < archive.byteLength; at += SLICE_BYTES) yield archive.subarray(at, at + SLICE_BYTES);
}

/** The paths seen so far, to refuse a layout before the disk does (tar would unlink and replace). */
class Layout {
  readonly #files = new Set<string>();
  readonly #dirs = new Set<string>();

  add(entryPath: string, type: string): string | undefined {
    const parts = entryPath.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const ancestor = parts.slice(0, i).join('/');
      if (this.#files.has(ancestor)) return `under the file ${JSON.stringify(ancestor)}`;
    }
    const isDir = type === 'Directory';
    if (isDir && this.#files.has(entryPath)) return 'a directory where a file is';
    if (!isDir && this.#dirs.has(entryPath)) return 'a file where a directory is';
    for (let i = 1; i < parts.length; i += 1) this.#dirs.add(parts.slice(0, i).join('/'));
    if (isDir) this.#dirs.add(entryPath);
    else this.#files.add(entryPath);
    return undefined;
  }

  files(): string[] {
    return [...this.#files];
  }
}

function normalise(entryPath: string): string {
  return path.posix.normalize(entryPath).replace(/^\.\/|\/$/g, '');
}

/** node-tar's type names, in words; anything else is named by its tar type. */
const REFUSED_KINDS: Record<string, string> = {
  Link: 'a hard link',
  SymbolicLink: 'a symbolic link',
  CharacterDevice: 'a character device',
  BlockDevice: 'a block device',
  FIFO: 'a FIFO',
  ContiguousFile: 'a contiguous file (tar type 7)',
};

function entryProblem(entryPath: string, type: string): string | undefined {
  if (type !== 'File' && type !== 'OldFile' && type !== 'Directory') {
    return `${REFUSED_KINDS[type] ?? `an entry of tar type ${type}`}; only regular files and directories are allowed`;
  }
  if (entryPath.startsWith('/') || /^[A-Za-z]:/.test(entryPath) || entryPath.includes('\\')) {
    return 'absolute path';
  }
  if (entryPath.split('/').includes('..')) return "path contains '..'";
  if (entryPath.includes('\0')) return 'NUL in path';
  if (normalise(entryPath) === '.' || normalise(entryPath) === '')
    return type === 'Directory' ? undefined : 'empty path';
  return undefined;
}
