import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CHILD = join(import.meta.dirname, 'shutdown-child.ts');

function startChild(args: string[] = []) {
  // No vitest flags in the child: it is a plain Node process running TypeScript natively.
  const child = fork(CHILD, args, { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return { child, ready: once(child, 'message'), exited: once(child, 'exit') };
}

describe('onShutdownSignal', () => {
  it('shuts a supervised process down cleanly when its IPC channel closes (the supervisor died)', async () => {
    const { child, ready, exited } = startChild();
    await ready;
    child.disconnect();
    expect(await exited).toEqual([0, null]);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const { child, ready, exited } = startChild();
    await ready;
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
  });

  it('shuts down cleanly on SIGHUP (the terminal closed)', async () => {
    const { child, ready, exited } = startChild();
    await ready;
    child.kill('SIGHUP');
    expect(await exited).toEqual([0, null]);
  });

  it('exits 1 when close outlasts the grace period', async () => {
    const { child, ready, exited } = startChild(['hang']);
    await ready;
    child.kill('SIGTERM');
    expect(await exited).toEqual([1, null]);
  });

  it('exits 1 at once on a second SIGTERM while closing', async () => {
    const { child, ready, exited } = startChild(['hang-long']);
    await ready;
    const closing = once(child, 'message');
    child.kill('SIGTERM');
    // The first signal started a close that never ends, within a grace longer than this test's
    // timeout: only the second signal can end the process in time.
    await closing;
    child.kill('SIGTERM');
    expect(await exited).toEqual([1, null]);
  });
});
