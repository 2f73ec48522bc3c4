import { createCodeRunner } from './code-runner.ts';
import { createEngine } from './engine.ts';
import { createFlowExecutor } from './flow-executor.ts';
import { createHttpClient } from './http-client.ts';
import { createIpcChannel, processIpcPort } from './ipc-channel.ts';
import { BUILT_IN_PIECES, createPieceRegistry } from './piece-registry.ts';

/**
 * The engine child process. It has no configuration of its own: everything a run needs
 * arrives with each `execute` message from the worker that forked it.
 */
function main(): void {
  const channel = createIpcChannel(processIpcPort(process));
  const http = createHttpClient();
  const codeRunner = createCodeRunner({
    onCatastrophicError(message) {
      // isolated-vm: the process can no longer be trusted; the worker sees ENGINE_CRASHED.
      channel.log('fatal', 'isolated-vm catastrophic error', { message });
      process.abort();
    },
  });
  const executor = createFlowExecutor({
    pieces: createPieceRegistry(BUILT_IN_PIECES),
    codeRunner,
    http,
    log: channel.log,
  });
  const engine = createEngine({ channel, executor });

  // The IPC channel closes when the worker dies: an engine without a worker must not linger.
  channel.onDisconnect(() => {
    http.close();
    process.exit(0);
  });
  engine.start();
}

main();
