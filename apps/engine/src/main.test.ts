import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type EngineToWorker, EngineToWorkerSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

describe('engine main', () => {
  it('says ready, drops a bad frame with a log line, and exits when its worker goes away', async () => {
    const child = fork(MAIN, [], { execArgv: [], env: {}, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const messages: EngineToWorker[] = [];
    const nextMessage = () =>
      once(child, 'message').then(([frame]) => {
        const message = EngineToWorkerSchema.parse(frame);
        messages.push(message);
        return message;
      });

    expect(await nextMessage()).toEqual({ version: 1, type: 'ready', pid: child.pid });

    child.send({ version: 1, type: 'execute', requestId: 'r' });
    expect(await nextMessage()).toMatchObject({ type: 'log', level: 'warn', msg: 'dropped a bad IPC frame' });

    const exited = once(child, 'exit');
    child.disconnect();
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
