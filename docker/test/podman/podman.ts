import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** podman's settings for this check (runc, no default rlimits); nothing under /etc changes. */
export const CONTAINERS_CONF = fileURLToPath(new URL('containers.conf', import.meta.url));

export class CommandError extends Error {
  readonly command: string;
  readonly exitCode: number | null;
  readonly output: string;

  constructor(command: string, exitCode: number | null, output: string) {
    super(`${command} exited with ${exitCode}:\n${output.slice(-4_000)}`);
    this.name = 'CommandError';
    this.command = command;
    this.exitCode = exitCode;
    this.output = output;
  }
}

export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Feeds this to the command's standard input. */
  input?: NodeJS.ReadableStream;
  /** Prints the command's output as it comes (builds), instead of only keeping it. */
  echo?: boolean;
  /** A non-zero exit is an answer, not an error (probes such as `image exists`). */
  allowFailure?: boolean;
}

export interface RunResult {
  exitCode: number | null;
  output: string;
}

/** Runs a command with podman's config in its environment and collects stdout and stderr. */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = { ...process.env, CONTAINERS_CONF, ...options.env };
  const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (options.input === undefined) child.stdin.end();
  else options.input.pipe(child.stdin);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (options.echo) process.stdout.write(chunk);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) => {
      const printable = [command, ...args].join(' ');
      if (exitCode !== 0 && !options.allowFailure) reject(new CommandError(printable, exitCode, output));
      else resolve({ exitCode, output });
    });
  });
}

export const podman = (args: string[], options?: RunOptions) => run('podman', args, options);

export async function imageExists(name: string): Promise<boolean> {
  return (await podman(['image', 'exists', name], { allowFailure: true })).exitCode === 0;
}
