import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The checkout this benchmark belongs to. */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * `pnpm build` (engine bundle and piece archives): a benchmark measures the built program.
 * Throws with the build's last output when it fails.
 */
export async function buildFlowbox(signal: AbortSignal): Promise<void> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'build.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => {
    child.once('error', () => done(null));
    child.once('close', done);
  });
  signal.throwIfAborted();
  if (code !== 0) throw new Error(`pnpm build failed (exit ${code}):\n${output.slice(-4000)}`);
}
