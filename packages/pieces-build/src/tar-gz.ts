import { gunzipSync, gzipSync } from 'node:zlib';

/** One regular file of an archive. */
export interface TarEntry {
  name: string;
  data: Uint8Array;
}

const BLOCK = 512;

/**
 * A gzip'd ustar archive of regular files that depends only on the entries: they are sorted by
 * name and every header has the same mode, owner and mtime (0), so unchanged input gives the
 * same bytes and the same sha256 on every build. Written by hand because `tar` takes modes and
 * times from the file system (the umask would leak into the hash).
 */
export function createTarGz(entries: readonly TarEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const chunks: Uint8Array[] = [];
  for (const entry of sorted) {
    chunks.push(header(entry.name, entry.data.byteLength), entry.data);
    const padding = (BLOCK - (entry.data.byteLength % BLOCK)) % BLOCK;
    if (padding > 0) chunks.push(new Uint8Array(padding));
  }
  // Two zero blocks end the archive.
  chunks.push(new Uint8Array(BLOCK * 2));
  // gzip's header carries no name and mtime 0 here, so it adds nothing variable either.
  return gzipSync(Buffer.concat(chunks), { level: 9 });
}

function header(name: string, size: number): Buffer {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw new Error(`unsupported archive entry name: ${name}`);
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'ascii');
  writeOctal(block, 100, 8, 0o644); // mode
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, 0); // mtime
  block.write('        ', 148, 8, 'ascii'); // checksum is computed with its own field as spaces
  block.write('0', 156, 1, 'ascii'); // regular file
  block.write('ustar\u000000', 257, 8, 'ascii');
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(`${checksum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return block;
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  const digits = value.toString(8);
  if (digits.length > length - 1) throw new Error(`${value} does not fit a ${length}-byte tar field`);
  block.write(`${digits.padStart(length - 1, '0')}\u0000`, offset, length, 'ascii');
}

/** Reads what `createTarGz` writes (regular files only), to check archives in tests. */
export function readTarGz(archive: Uint8Array): (TarEntry & { mode: number; mtime: number })[] {
  const tar = gunzipSync(archive);
  const entries: (TarEntry & { mode: number; mtime: number })[] = [];
  for (let offset = 0; offset + BLOCK <= tar.byteLength; ) {
    const block = tar.subarray(offset, offset + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      block.toString('ascii', start, start + length).replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12), 8);
    const start = offset + BLOCK;
    entries.push({
      name: field(0, 100),
      mode: Number.parseInt(field(100, 8), 8),
      mtime: Number.parseInt(field(136, 12), 8),
      data: tar.subarray(start, start + size),
    });
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}
