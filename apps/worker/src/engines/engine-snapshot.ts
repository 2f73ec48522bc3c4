import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { access, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** The engine's snapshot script in the build output and in the install folder (scripts/build/engine-bundle.ts). */
export const SNAPSHOT_ENTRY = 'engine-snapshot.cjs';

/**
 * `<engineDir>/snapshot-<node version>-<platform>-<arch>.blob`, built from the installed
 * `engine-snapshot.cjs` unless it is there already. Built by the worker, not `pnpm build`: a
 * blob only starts on the Node binary that wrote it. Renamed into place, so a half-written blob
 * is never started.
 */
export async function ensureEngineSnapshot(engineDir: string): Promise<string> {
  const blob = path.join(engineDir, `snapshot-${process.version}-${process.platform}-${process.arch}.blob`);
  if (await exists(blob)) return blob;
  const building = `${blob}.${randomUUID()}.tmp`;
  try {
    // The building process runs the engine's import-time code only: no job, no worker variable.
    const child = spawn(process.execPath, ['--snapshot-blob', building, '--build-snapshot', SNAPSHOT_ENTRY], {
      cwd: engineDir,
      env: {},
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    if (code !== 0) {
      throw new Error(
        `node --build-snapshot ended with code ${code}, signal ${signal}: ${lastLines(stderr)}`,
      );
    }
    await rename(building, blob);
    return blob;
  } finally {
    await rm(building, { force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Node prints a warning per builtin it has not verified for snapshots; the cause is at the end. */
function lastLines(text: string): string {
  return text.trim().split('\n').slice(-8).join('\n');
}
