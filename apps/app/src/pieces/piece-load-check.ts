import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  FlowboxError,
  type PieceLoadReport,
  PieceLoadReportSchema,
  type PieceManifest,
} from '@flowbox/protocol';
import type { ArchiveFiles } from './piece-archive-check.ts';

export type LoadedPiece = Extract<PieceLoadReport, { type: 'loaded' }>;

const CHILD = path.join(import.meta.dirname, 'piece-load-child.ts');
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');
/** A piece's module loads in milliseconds; this leaves room for a loaded machine. */
export const LOAD_CHECK_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Imports the piece's entry module in a short-lived child process, never in the app: a
 * user's module runs there with an empty environment (no secrets), Node's permission model on
 * (it may read only its own files and the shared modules': no writes, no child processes, no
 * workers) and a deadline. The child loads it as the engine does (require(), so top-level await
 * is refused as the engine would refuse it) and reports its actions, their input schemas and
 * the Node built-ins it imports. Throws INVALID_PIECE naming what went wrong.
 */
export async function loadCheckPiece(manifest: PieceManifest, files: ArchiveFiles): Promise<LoadedPiece> {
  const code = files.get(manifest.entry);
  if (code === undefined) {
    throw invalid(`the manifest's entry ${manifest.entry} is not in the archive`);
  }
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'flowbox-piece-check-')));
  try {
    for (const [name, data] of files) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), data);
    }
    const report = await runChild(dir, path.join(dir, manifest.entry));
    if (report.type === 'refused') throw invalid(report.problem);
    const builtins = new Set([...report.nodeBuiltins, ...scanBuiltinCalls(code.toString('utf8'))]);
    return { ...report, nodeBuiltins: [...builtins].sort() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runChild(dir: string, entry: string): Promise<PieceLoadReport> {
  // Read access: the piece's directory, and where the child's own modules and zod live.
  const readable = [
    dir,
    path.join(REPO_ROOT, 'apps', 'app'),
    path.join(REPO_ROOT, 'packages'),
    path.join(REPO_ROOT, 'node_modules'),
  ];
  const args = ['--permission', ...readable.map((p) => `--allow-fs-read=${p}`), CHILD, entry];
  const nonce = randomUUID();
  const { stdout, stderr, timedOut, exit } = await new Promise<{
    stdout: string;
    stderr: string;
    timedOut: boolean;
    exit: string;
  }>((resolve) => {
    const child = execFile(
      process.execPath,
      args,
      {
        env: {},
        cwd: dir,
        timeout: LOAD_CHECK_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_OUTPUT_BYTES,
      },
      (error, out, err) => {
        resolve({
          stdout: String(out),
          stderr: String(err),
          timedOut: error !== null && child.killed && child.signalCode === 'SIGKILL',
          exit: child.signalCode ?? String(child.exitCode),
        });
      },
    );
    child.stdin?.end(nonce);
  });
  if (timedOut) {
    throw invalid(`the module did not finish loading within ${LOAD_CHECK_TIMEOUT_MS / 1000} s`);
  }
  // The module may print too, even JSON: only a line carrying the nonce is the child's report.
  for (const line of stdout.split('\n').reverse()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const report = PieceLoadReportSchema.safeParse(parsed);
    if (report.success && report.data.nonce === nonce) return report.data;
  }
  const tail = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  throw invalid(
    `the module ended its loading process (exit ${exit}) without loading${tail === '' ? '' : `: ${tail}`}`,
  );
}

/** Built-ins reached without a static import: `process.getBuiltinModule('fs')`, `import('node:fs')`. */
function scanBuiltinCalls(code: string): string[] {
  const found: string[] = [];
  for (const match of code.matchAll(
    /\b(?:getBuiltinModule|import|require)\s*\(\s*["']([a-z_:/]+)["']\s*\)/g,
  )) {
    const specifier = match[1] ?? '';
    if (isBuiltin(specifier)) found.push(specifier.replace(/^node:/, ''));
  }
  return found;
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_PIECE', message);
}
