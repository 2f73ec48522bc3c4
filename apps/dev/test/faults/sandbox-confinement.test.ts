// A hostile piece in EXECUTION_MODE=SANDBOXED. Pieces run as engine code, outside
// isolated-vm, so the engine's sandbox (bubblewrap, the relay, the seccomp filter) is all that
// stands between a piece and the worker. Each attempt runs in real app, worker and engine
// processes; it must fail with a run that names why, reach nothing (no connection on a
// loopback listener, nothing written on the host), and leave the worker serving the next run.
// The engine sees its job's flow bundle and pieces only, not the cache's others.
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultStack,
  faultsFlow,
  postWebhook,
  report,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const ATTEMPT = faultsFlow('attempt', { what: '{{trigger.what}}', target: '{{trigger.target}}' });

interface Row {
  what: string;
  /** What the piece is handed: a pid, a port, a path, a route. */
  target: () => string;
  /** The run's error message says what stopped it. */
  refused: RegExp;
}

describe('a hostile piece in a sandboxed engine (EXECUTION_MODE=SANDBOXED, warm)', () => {
  let fault: FaultStack;
  let listener: Server;
  let listenerPort: number;
  let connections = 0;
  let workerPid: number;
  let cacheDir: string;
  /** The benchmark flow's bundle, in the worker's cache: another flow's, for the attempt flow. */
  let otherBundle: string;

  beforeAll(async () => {
    listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
    fault = await startFaultStack({
      flows: { attempt: ATTEMPT },
      workerEnv: { EXECUTION_MODE: 'SANDBOXED', REUSE_SANDBOX: 'true' },
    });
    workerPid = fault.stack.workers[0]?.pid ?? -1;
    cacheDir = join(fault.dataDir, 'cache-0');
    const first = await postWebhook(fault.url, 'benchmark');
    expect(first.body).toEqual({ result: 6 });
    const bundles = readdirSync(join(cacheDir, 'bundles'));
    expect(bundles).toHaveLength(1);
    otherBundle = join(cacheDir, 'bundles', bundles[0] ?? '');
  });

  afterAll(async () => {
    await fault?.close();
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  });

  const rows: Row[] = [
    { what: 'read-worker-secrets', target: () => String(workerPid), refused: /ENOENT.*\/proc\/\d+\/environ/ },
    { what: 'list-processes', target: () => '', refused: /sees only [1-3] processes/ },
    { what: 'signal-worker', target: () => String(workerPid), refused: /ESRCH/ },
    { what: 'read-cache', target: () => join(cacheDir, 'pieces'), refused: /EROFS/ },
    { what: 'read-file', target: () => otherBundle, refused: /ENOENT/ },
    // Its own flow's bundle and pieces only: not the benchmark's bundle, nor its math-helper piece.
    { what: 'list-dir', target: () => join(cacheDir, 'bundles'), refused: /^lists 1: attempt-[^,]+\.json$/ },
    {
      what: 'list-dir',
      target: () => join(cacheDir, 'pieces'),
      refused: /^lists 2: faults@[^,]+, webhook@[^,]+$/,
    },
    { what: 'write-outside-tmp', target: () => '/planted-by-a-piece', refused: /EROFS/ },
    { what: 'write-outside-tmp', target: () => `${process.execPath}.planted`, refused: /EROFS/ },
    { what: 'fill-tmp', target: () => '', refused: /ENOSPC/ },
    { what: 'fork', target: () => '', refused: /^spawn EPERM$/ },
    { what: 'connect-loopback', target: () => String(listenerPort), refused: /ECONNREFUSED|ENETUNREACH/ },
    {
      what: 'relay-other-route',
      target: () => '/v1/flows',
      refused: /relay \/v1\/flows answered 403.*is not relayed/,
    },
    {
      what: 'relay-other-route',
      target: () => '/v1/engine/runs/00000000-0000-4000-8000-000000000000/steps',
      // Callbacks go over IPC: the relay passes none on, not even this run's.
      refused: /answered 403.*is not relayed/,
    },
    { what: 'upload-other-log', target: () => 'another-run', refused: /relay \/log-upload answered 4\d\d/ },
  ];

  it('refuses every attempt, names why in the run, and serves the next run', async () => {
    const seen: Record<string, string> = {};
    for (const row of rows) {
      const answer = await postWebhook(fault.url, 'attempt', { what: row.what, target: row.target() });
      const run = await waitForFinal(fault, answer.runId ?? '');
      const label = `${row.what} ${row.target()}`;
      seen[label] = `${run.status} ${run.error?.message ?? ''}`.slice(0, 200);
      expect(run.status, label).toBe('FAILED');
      expect(run.error?.step, label).toBe('fault');
      expect(run.error?.message, label).toMatch(row.refused);
      // The worker (and its engine) serve on.
      const next = await postWebhook(fault.url, 'benchmark');
      expect(next.body, `after ${label}`).toEqual({ result: 6 });
    }
    report('hostile piece, SANDBOXED', seen);

    expect(connections).toBe(0);
    expect(existsSync('/planted-by-a-piece')).toBe(false);
    expect(existsSync(`${process.execPath}.planted`)).toBe(false);
    expect(existsSync(join(cacheDir, 'pieces', 'planted'))).toBe(false);
    // What the sandbox could not see is there on the host.
    expect(existsSync(otherBundle)).toBe(true);
    expect(readdirSync(join(cacheDir, 'pieces')).some((name) => name.startsWith('math-helper@'))).toBe(true);
    expect(() => process.kill(workerPid, 0)).not.toThrow();
    // The listener's control: it does count a connection made from outside the sandbox.
    const { connect } = await import('node:net');
    await new Promise<void>((resolve) => connect(listenerPort, '127.0.0.1', resolve).on('error', resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections).toBe(1);
  });
});
