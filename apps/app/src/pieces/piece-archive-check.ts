import { gunzipSync } from 'node:zlib';
import { FlowboxError } from '@flowbox/protocol';

/** The regular files of a checked archive, by their normalised relative path. */
export type ArchiveFiles = ReadonlyMap<string, Buffer>;

export interface ArchiveLimits {
  /** The archive as uploaded (PIECE_ARCHIVE_MAX_BYTES). */
  maxBytes: number;
}

const BLOCK = 512;
/** The worker's own unpack limit (tar-extract.ts); an archive past it could never run. */
const MAX_ENTRIES = 1_000;
/** Unpacked, an archive may be this many times its packed cap: bounds a gzip bomb's memory. */
const UNPACKED_FACTOR = 10;

/**
 * Reads a piece archive in memory, never touching the disk, and refuses what the worker would
 * refuse when it unpacks it (tar-extract.ts), so a bad archive fails at publish instead of at
 * its first run: not gzip, not tar, an absolute path, a `..` segment, a link (the worker takes
 * none, inside its root or not), a device, FIFO or other special file, or too large.
 */
export function checkPieceArchive(archive: Buffer, limits: ArchiveLimits): ArchiveFiles {
  if (archive.byteLength > limits.maxBytes) {
    throw invalid(
      `archive is ${archive.byteLength} bytes, over the ${limits.maxBytes}-byte cap (PIECE_ARCHIVE_MAX_BYTES)`,
    );
  }
  if (archive[0] !== 0x1f || archive[1] !== 0x8b) throw invalid('archive is not gzip');
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: limits.maxBytes * UNPACKED_FACTOR });
  } catch (error) {
    throw invalid(`archive is not valid gzip or unpacks past ${UNPACKED_FACTOR}x the cap: ${String(error)}`);
  }
  return readTar(tar);
}

function readTar(tar: Buffer): ArchiveFiles {
  const files = new Map<string, Buffer>();
  let entries = 0;
  // Extended headers (pax `x`, GNU `L`/`K`) name the entry that follows them.
  let pending: { path?: string; linkpath?: string } = {};
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > tar.byteLength) throw invalid('archive is not a tar: it ends inside a header');
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break; // end of archive
    if (!checksumMatches(header))
      throw invalid(`archive is not a tar: bad header checksum at byte ${offset}`);
    const type = String.fromCharCode(header[156] ?? 0);
    const size = readOctal(header, 124, 12);
    const dataStart = offset + BLOCK;
    if (dataStart + size > tar.byteLength) throw invalid('archive is not a tar: an entry runs past its end');
    const data = tar.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;

    if (type === 'x') {
      pending = { ...pending, ...paxRecords(data) };
      continue;
    }
    if (type === 'g') continue; // global pax header: no path of its own
    if (type === 'L' || type === 'K') {
      const value = data.toString('utf8').replace(/\0.*$/s, '');
      pending = type === 'L' ? { ...pending, path: value } : { ...pending, linkpath: value };
      continue;
    }
    const name = pending.path ?? headerPath(header);
    pending = {};
    entries += 1;
    if (entries > MAX_ENTRIES) throw invalid(`archive has more than ${MAX_ENTRIES} entries`);
    const problem = entryProblem(name, type);
    if (problem !== undefined) throw invalid(`archive entry ${JSON.stringify(name)}: ${problem}`);
    if (type === '0' || type === '\0' || type === '7') files.set(normalise(name), Buffer.from(data));
  }
  return files;
}

function entryProblem(name: string, type: string): string | undefined {
  const kinds: Record<string, string> = {
    '1': 'a hard link',
    '2': 'a symbolic link',
    '3': 'a character device',
    '4': 'a block device',
    '6': 'a FIFO',
  };
  if (type !== '0' && type !== '\0' && type !== '7' && type !== '5') {
    return `${kinds[type] ?? `an entry of tar type ${JSON.stringify(type)}`}; only regular files and directories are allowed`;
  }
  if (name === '') return 'empty path';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.includes('\\')) return 'absolute path';
  if (name.split('/').includes('..')) return "path contains '..'";
  if (name.includes('\0')) return 'NUL in path';
  return undefined;
}

function normalise(name: string): string {
  return name
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}

function headerPath(header: Buffer): string {
  const name = cString(header, 0, 100);
  const isUstar = header.subarray(257, 262).toString('ascii') === 'ustar';
  const prefix = isUstar ? cString(header, 345, 155) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

function cString(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
}

function readOctal(block: Buffer, start: number, length: number): number {
  const text = cString(block, start, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw invalid('archive is not a tar: a header has a non-octal size');
  return Number.parseInt(text, 8);
}

function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  const text = cString(header, 148, 8).trim();
  return /^[0-7]+$/.test(text) && Number.parseInt(text, 8) === sum;
}

/** `<length> <key>=<value>\n` records; only `path` and `linkpath` matter here. */
function paxRecords(data: Buffer): { path?: string; linkpath?: string } {
  const out: { path?: string; linkpath?: string } = {};
  for (const line of data.toString('utf8').split('\n')) {
    const match = /^\d+ ([^=]+)=(.*)$/s.exec(line);
    if (match?.[1] === 'path') out.path = match[2];
    if (match?.[1] === 'linkpath') out.linkpath = match[2];
  }
  return out;
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_PIECE', message);
}
