import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface WrittenFile {
  path: string;
  bytes: number;
  sha256: string;
  /** False when the file already held these bytes and was left alone (its mtime too). */
  changed: boolean;
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Writes `data` unless the file already holds it. The write goes through a temporary file and a
 * rename, so a process that reads the file while a build runs (a test, a worker copying the
 * engine) sees the old bytes or the new ones, never half of them.
 */
export async function writeIfChanged(path: string, data: Uint8Array | string): Promise<WrittenFile> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const sha256 = sha256Hex(bytes);
  const current = await readFile(path).catch(() => null);
  if (current !== null && sha256Hex(current) === sha256) {
    return { path, bytes: bytes.byteLength, sha256, changed: false };
  }
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
  return { path, bytes: bytes.byteLength, sha256, changed: true };
}
