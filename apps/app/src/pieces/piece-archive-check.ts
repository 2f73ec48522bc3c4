import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ARCHIVE_EXTRACT_LIMITS,
  ArchiveRefusedError,
  extractArchive,
} from '@flowbox/node-kit/archive-extract';
import { FlowboxError } from '@flowbox/protocol';

/** The regular files of a checked archive, by their normalised relative path. */
export type ArchiveFiles = ReadonlyMap<string, Buffer>;

export interface ArchiveLimits {
  /** The archive as uploaded (PIECE_ARCHIVE_MAX_BYTES). */
  maxBytes: number;
  /** Its files unpacked, added up (PIECE_UNPACKED_MAX_BYTES), at most what a worker unpacks. */
  maxUnpackedBytes: number;
}

/**
 * Unpacks a piece archive the way a worker will (the same reader, @flowbox/node-kit's
 * archive-extract, with the worker's entry rules and limits or tighter ones), streaming to a
 * private temporary directory, and returns the files as they landed there: what the registry
 * then checks is byte for byte what a worker runs. Refuses (INVALID_PIECE) what the worker would
 * refuse: not gzip, not tar, an absolute path, a `..` segment, a link, a device, FIFO or other
 * special file, an entry under a file, too many entries or too many bytes.
 */
export async function checkPieceArchive(archive: Buffer, limits: ArchiveLimits): Promise<ArchiveFiles> {
  if (archive.byteLength > limits.maxBytes) {
    throw invalid(
      `archive is ${archive.byteLength} bytes, over the ${limits.maxBytes}-byte cap (PIECE_ARCHIVE_MAX_BYTES)`,
    );
  }
  if (archive[0] !== 0x1f || archive[1] !== 0x8b) throw invalid('archive is not gzip');
  const dir = await mkdtemp(path.join(tmpdir(), 'flowbox-piece-unpack-'));
  try {
    let names: string[];
    try {
      names = await extractArchive(archive, path.join(dir, 'piece'), {
        maxEntries: ARCHIVE_EXTRACT_LIMITS.maxEntries,
        maxBytes: Math.min(limits.maxUnpackedBytes, ARCHIVE_EXTRACT_LIMITS.maxBytes),
      });
    } catch (error) {
      if (error instanceof ArchiveRefusedError) {
        const setting = error.refusal === 'limits' ? ' (PIECE_UNPACKED_MAX_BYTES)' : '';
        throw invalid(`${error.message}${setting}`);
      }
      throw error;
    }
    const files = new Map<string, Buffer>();
    for (const name of names) files.set(name, await readFile(path.join(dir, 'piece', name)));
    return files;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_PIECE', message);
}
