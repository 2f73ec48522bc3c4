import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface LogLine {
  raw: string;
  /** The parsed JSON object when the line is a structured log line. */
  json: Record<string, unknown> | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  /** Resolves with the first IPC message from the child, e.g. the app's `{ type: 'ready', url }`. */
  readonly firstMessage: Promise<unknown>;
  /** Resolves with the first line (already printed or still to come) that matches. */
  waitForLine(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Runs a flowbox process (a Node entry file) as a child, passing its output through `onLine`
 * and letting callers wait on log lines rather than on time.
 */
export function startNodeProcess(options: {
  name: string;
  entry: string;
  env: Record<string, string>;
  onLine?: (name: string, line: LogLine) => void;
  nodeArgs?: string[];
}): ManagedProcess {
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), options.entry], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const lines: LogLine[] = [];
  const watchers = new Set<(line: LogLine) => void>();
  const onRaw = (raw: string) => {
    const line: LogLine = { raw, json: parseJson(raw) };
    // Keep a bounded history so late waiters still see early lines.
    if (lines.length < 1000) lines.push(line);
    options.onLine?.(options.name, line);
    for (const watcher of watchers) watcher(line);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', onRaw);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', onRaw);

  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? null : 128)));
  });

  const firstMessage = new Promise<unknown>((resolve, reject) => {
    child.once('message', resolve);
    void exited.then((code) => {
      const tail = lines
        .slice(-15)
        .map((l) => l.raw)
        .join('\n');
      reject(new Error(`${options.name} exited with ${code} before it was ready:\n${tail}`));
    });
  });
  // Callers that never wait for it must not see an unhandled rejection.
  firstMessage.catch(() => {});

  return {
    name: options.name,
    pid: child.pid ?? -1,
    exited,
    firstMessage,
    waitForLine(match, timeoutMs) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const done = () => {
          watchers.delete(watcher);
          clearTimeout(timer);
        };
        const watcher = (line: LogLine) => {
          if (!match(line)) return;
          done();
          resolve(line);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${options.name}: expected log line did not appear within ${timeoutMs} ms`));
        }, timeoutMs);
        watchers.add(watcher);
        void exited.then((code) => {
          if (!watchers.has(watcher)) return;
          done();
          const tail = lines
            .slice(-15)
            .map((l) => l.raw)
            .join('\n');
          reject(new Error(`${options.name} exited with ${code} before it was ready:\n${tail}`));
        });
      });
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

function parseJson(raw: string): Record<string, unknown> | null {
  if (!raw.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
