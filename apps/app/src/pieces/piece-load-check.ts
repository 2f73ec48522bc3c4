import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdir, mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkInputSchema } from '@flowbox/pieces-framework/validate';
import {
  FlowboxError,
  type PieceLoadReport,
  PieceLoadReportSchema,
  type PieceManifest,
} from '@flowbox/protocol';
import type { ArchiveFiles } from './piece-archive-check.ts';
import { type LoadCheckIsolation, sandboxedLoadCommand } from './piece-load-sandbox.ts';

export type LoadedPiece = Extract<PieceLoadReport, { type: 'loaded' }>;

const CHILD = path.join(import.meta.dirname, 'piece-load-child.ts');
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');
/** A piece's module loads in milliseconds; this leaves room for a loaded machine. */
export const LOAD_CHECK_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** The seccomp program's file descriptor in the sandbox: after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

export interface LoadCheckOptions {
  isolation: LoadCheckIsolation;
  /** A built-in piece (the app's own packages): checked without the sandbox where there is none. */
  builtIn?: boolean | undefined;
}

/**
 * Imports the piece's entry module in a short-lived child process, never in the app: in a
 * bubblewrap sandbox (piece-load-sandbox.ts: no network, its own PID namespace, read-only files
 * but a private /tmp, no child processes, bounded memory and CPU), with an empty environment (no
 * secrets), Node's permission model on (it may read only its own files and the shared
 * modules') and a deadline. The child loads it as the engine does (require(), so top-level
 * await is refused as the engine would refuse it) and reports its actions, their input schemas
 * and the Node built-ins it imports. Throws INVALID_PIECE naming what went wrong, or
 * PIECE_CHECK_UNAVAILABLE when this app may not run the check (LoadCheckIsolation).
 */
export async function loadCheckPiece(
  manifest: PieceManifest,
  files: ArchiveFiles,
  options: LoadCheckOptions,
): Promise<LoadedPiece> {
  const { isolation } = options;
  if (isolation.mode === 'unavailable' && options.builtIn !== true) {
    throw new FlowboxError(
      'PIECE_CHECK_UNAVAILABLE',
      `pieces cannot be published on this app: their load check runs in a sandbox it cannot make (${isolation.reason}). Set PIECE_LOAD_CHECK=UNSANDBOXED to check them in a plain child process instead (docs/configuration.md)`,
    );
  }
  const code = files.get(manifest.entry);
  if (code === undefined) {
    throw invalid(`the manifest's entry ${manifest.entry} is not in the archive`);
  }
  // The piece's files in `piece/`, bound into the sandbox; the seccomp program beside it, not.
  const work = await realpath(await mkdtemp(path.join(tmpdir(), 'flowbox-piece-check-')));
  const dir = path.join(work, 'piece');
  try {
    await mkdir(dir);
    for (const [name, data] of files) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), data);
    }
    let seccompPath: string | undefined;
    if (isolation.mode === 'sandboxed') {
      seccompPath = path.join(work, 'seccomp.bpf');
      await writeFile(seccompPath, isolation.seccomp);
    }
    const report = await runChild(dir, path.join(dir, manifest.entry), seccompPath);
    if (report.type === 'refused') throw invalid(report.problem);
    // What an engine validates with must be what the builders write: checked here, outside the piece.
    for (const action of report.actions) {
      try {
        checkInputSchema(action.name, action.inputSchema);
        // Fields of a credential (basic auth, custom fields) are checked as inputs are.
        if (action.auth !== undefined && action.auth.type !== 'SECRET_TEXT') {
          checkInputSchema(`${action.name} (auth)`, action.auth.schema);
        }
      } catch (error) {
        throw invalid(error instanceof Error ? error.message : String(error));
      }
    }
    const builtins = new Set([...report.nodeBuiltins, ...scanBuiltinCalls(code.toString('utf8'))]);
    return { ...report, nodeBuiltins: [...builtins].sort() };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function runChild(
  dir: string,
  entry: string,
  seccompPath: string | undefined,
): Promise<PieceLoadReport> {
  // Read access: the piece's directory, and where the child's own modules and zod live; at their
  // real paths, which is where the sandbox binds them.
  const readable = [
    dir,
    ...[
      path.join(REPO_ROOT, 'apps', 'app'),
      path.join(REPO_ROOT, 'packages'),
      path.join(REPO_ROOT, 'node_modules'),
    ].map((shared) => realpathSync(shared)),
  ];
  const nodeArgs = [
    '--permission',
    ...readable.map((p) => `--allow-fs-read=${p}`),
    realpathSync(CHILD),
    entry,
  ];
  const nonce = randomUUID();
  const seccomp = seccompPath === undefined ? undefined : await open(seccompPath, 'r');
  let outcome: ChildOutcome;
  try {
    const { command, args } =
      seccomp === undefined
        ? { command: process.execPath, args: nodeArgs }
        : sandboxedLoadCommand({ readable, cwd: dir, nodeArgs, seccompFd: SECCOMP_FD });
    outcome = await runToEnd(command, args, {
      cwd: dir,
      extraFd: seccomp?.fd,
      stdin: nonce,
    });
  } finally {
    await seccomp?.close();
  }
  const { stdout, stderr, timedOut, exit } = outcome;
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
  // The sandbox itself failed to start (the probe at start passed): not the piece's fault.
  const sandboxError = seccompPath === undefined ? null : /^(?:bwrap|prlimit): .*$/m.exec(stderr);
  if (sandboxError !== null) {
    throw new FlowboxError(
      'PIECE_CHECK_UNAVAILABLE',
      `the piece's load check could not start its sandbox: ${sandboxError[0].slice(0, 300)}`,
    );
  }
  throw invalid(
    `the module ended its loading process (exit ${exit}) without loading${tail === '' ? '' : `: ${tail}`}`,
  );
}

interface ChildOutcome {
  stdout: string;
  stderr: string;
  timedOut: boolean;
  exit: string;
}

/**
 * Runs the child with an empty environment, its output bounded (MAX_OUTPUT_BYTES, then it is
 * killed), SIGKILLed at the deadline; a sandbox dies with bubblewrap (`--die-with-parent`).
 */
function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; extraFd: number | undefined; stdin: string },
): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: {},
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe', ...(options.extraFd === undefined ? [] : [options.extraFd])],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let bytes = 0;
    let timedOut = false;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > MAX_OUTPUT_BYTES) child.kill('SIGKILL');
      else into.push(chunk);
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, LOAD_CHECK_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        exit: signal ?? String(code),
      });
    });
    // The child may exit before it reads: a closed pipe is not the check's failure.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.stdin);
  });
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
