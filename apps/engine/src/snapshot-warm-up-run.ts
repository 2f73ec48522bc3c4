import { createAction, createPiece, createTrigger, Property } from '@flowbox/pieces-framework';
import {
  type EngineJob,
  type EngineToWorker,
  type ExecuteResult,
  FlowBundleSchema,
  type LogPersisted,
  type WorkerToEngine,
} from '@flowbox/protocol';
import type { CodeRunner } from './code-steps/code-runner.ts';
import { createIsolatedVmRunner } from './code-steps/isolated-vm-runner.ts';
import { createEngine } from './engine.ts';
import { createFlowExecutor } from './flows/flow-executor.ts';
import type { HttpClient, HttpRequest } from './host/http-client.ts';
import { createIpcAppClient } from './host/ipc-app-client.ts';
import { createIpcChannel } from './host/ipc-channel.ts';
import type { IpcPort } from './host/ipc-port.ts';
import { warmUpSchemaSamples } from './snapshot-warm-up.ts';

/**
 * The benchmark flow, run once while the startup snapshot is built, through the engine's own
 * frame handling, executor, step runner, templates, app client, log upload and code runner,
 * after the preload a prewarmed spare gets.
 * Node 24 keeps the bytecode of functions compiled before the snapshot is taken (README.md,
 * Startup snapshot), so a fresh engine's first job runs them compiled instead of compiling
 * each on its first call.
 *
 * Everything outside the engine is an in-process fake that answers with constants: the frame
 * comes from a fake port, which also answers the run's callbacks as the worker relays the app's
 * acceptance, the bundle and pieces from memory, the app's health check and the log upload from
 * a fake HTTP client that opens no socket and keeps nothing, and code steps from a fake
 * isolated-vm that evaluates nothing. Nothing it builds is kept: the run's executor, engine
 * and fakes are garbage once it resolves, and the engine's real ones are built per process
 * after the snapshot starts (engine-runtime.ts).
 *
 * Resolves with what the warm-up's HTTP client was asked, the callbacks it sent, the result
 * the engine sent and how the log upload after it ended, so a test (and the snapshot build,
 * which fails on it) sees that the run went through every step.
 */
export async function runWarmUpFlow(): Promise<{
  requests: string[];
  callbacks: string[];
  result: ExecuteResult;
  persisted: LogPersisted;
}> {
  const samples = warmUpSchemaSamples();
  if (samples.execute.type !== 'execute') throw new Error('the warm-up sample is not an execute frame');
  const pieces = WARM_UP_PIECES.map(({ name, version }) => ({ name, version }));
  // The schema samples' limits are the smallest valid ones; a run needs room to finish.
  const job: EngineJob = {
    ...samples.execute.job,
    pieces: pieces.map((piece) => ({ ...piece, dir: '/warm-up' })),
    logUpload: { ...samples.execute.job.logUpload, maxBytes: 1_000_000 },
    limits: { flowTimeoutMs: 30_000, codeStepTimeoutMs: 5_000, codeStepMemoryMb: 8 },
    // Traced, so the run trace's code is compiled too (an untraced run skips it).
    traceparent: WARM_UP_TRACEPARENT,
  };
  const bundle = FlowBundleSchema.parse({
    ...samples.bundle,
    pieces,
  });
  const requests: string[] = [];
  const http: HttpClient = {
    async request(request: HttpRequest) {
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      return { status: request.url === job.logUpload.url ? 204 : 200, bodyExcerpt: '' };
    },
    async warmUp() {},
    close() {},
  };
  const codeRunner = warmUpCodeRunner();
  let preloaded = () => {};
  const port = fakePort();
  // As engine-runtime.ts wires it: the callbacks ride the IPC channel.
  const channel = createIpcChannel(port.port);
  const executor = createFlowExecutor({
    bundles: { load: async () => bundle },
    pieces: {
      load: async (piece) => {
        const found = WARM_UP_PIECES.find((p) => p.name === piece.name);
        if (found === undefined) throw new Error(`the warm-up has no piece ${piece.name}`);
        return found;
      },
    },
    codeRunners: { SANDBOX_CODE_ONLY: codeRunner, SANDBOXED: codeRunner, UNSANDBOXED: codeRunner },
    http,
    log: (_level, msg) => {
      if (msg === 'preloaded pieces') preloaded();
    },
    appClient: (options) => createIpcAppClient(channel, options),
  });
  createEngine({ channel, executor }).start();
  // First as a prewarmed spare is readied (pieces, the isolate, the app connection), then the job.
  await new Promise<void>((resolve) => {
    preloaded = resolve;
    port.push({
      version: 1,
      type: 'preload',
      pieces: job.pieces,
      codeStepMemoryMb: job.limits.codeStepMemoryMb,
      appUrl: job.appUrl,
    });
  });
  const { result, persisted } = await port.deliver({
    version: 1,
    type: 'execute',
    requestId: 'warm-up',
    job,
  });
  codeRunner.close();
  return { requests, callbacks: port.callbacks, result, persisted };
}

const WARM_UP_TRACEPARENT = '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01';

/** The pieces the benchmark flow names, as in-process stand-ins with the same shapes. */
const WARM_UP_PIECES = [
  createPiece({
    name: 'webhook',
    version: '0.0.0-warm-up',
    triggers: [createTrigger({ name: 'catch_webhook', description: 'warm-up', run: (payload) => payload })],
    actions: [
      createAction({
        name: 'return_response',
        description: 'warm-up',
        props: {
          status: Property.Number({ displayName: 'Status', integer: true, defaultValue: 200 }),
          headers: Property.Object({ displayName: 'Headers', defaultValue: {} }),
          body: Property.Json({ displayName: 'Body' }),
        },
        async run(input, ctx) {
          const response = { status: input.status, headers: input.headers, body: input.body };
          await ctx.respond(response);
          return response;
        },
      }),
    ],
  }),
  createPiece({
    name: 'math-helper',
    version: '0.0.0-warm-up',
    actions: [
      createAction({
        name: 'addition_math',
        description: 'warm-up',
        props: {
          a: Property.Number({ displayName: 'A', required: true }),
          b: Property.Number({ displayName: 'B', required: true }),
        },
        run: (input) => ({ result: input.a + input.b }),
      }),
    ],
  }),
];

/**
 * The real isolated-vm runner over a stand-in for the native addon, which a snapshot cannot
 * hold: its isolate evaluates nothing and answers the benchmark code step's output.
 */
function warmUpCodeRunner(): CodeRunner {
  class Reference {
    release(): void {}
  }
  class Isolate {
    isDisposed = false;
    dispose(): void {
      this.isDisposed = true;
    }
    async createContext() {
      return {
        evalClosure: async () => JSON.stringify({ result: 6 }),
        release(): void {},
      };
    }
  }
  const fakeIvm = { Isolate, Reference } as unknown as typeof import('isolated-vm');
  return createIsolatedVmRunner({
    onCatastrophicError: () => {},
    loadIsolatedVm: async () => ({ default: fakeIvm }),
  });
}

/**
 * An IPC port that hands the engine one frame and resolves with the result it sends back and
 * the log upload's end after it; it accepts every callback, as the worker relays the app's
 * answer, and keeps their report types.
 */
function fakePort(): {
  port: IpcPort;
  callbacks: string[];
  push(frame: WorkerToEngine): void;
  deliver(frame: WorkerToEngine): Promise<{ result: ExecuteResult; persisted: LogPersisted }>;
} {
  let listener: ((frame: unknown) => void) | undefined;
  let answer: ((ended: { result: ExecuteResult; persisted: LogPersisted }) => void) | undefined;
  let result: ExecuteResult | undefined;
  const callbacks: string[] = [];
  const port: IpcPort = {
    connected: true,
    send(message: EngineToWorker, callback) {
      if (message.type === 'execute-result') result = message;
      if (message.type === 'log-persisted' && result !== undefined) answer?.({ result, persisted: message });
      if (message.type === 'callback') {
        callbacks.push(message.callback.report.type);
        const { callId } = message;
        // After this send returns, as an answer comes back over IPC.
        queueMicrotask(() =>
          push({ version: 1, type: 'callback-answer', callId, answer: { version: 1, type: 'ok' } }),
        );
      }
      callback(null);
    },
    onMessage(next) {
      listener = next;
    },
    onDisconnect() {},
  };
  // Through JSON, as a frame arrives over IPC.
  const push = (frame: WorkerToEngine) => listener?.(JSON.parse(JSON.stringify(frame)));
  return {
    port,
    callbacks,
    push,
    deliver: (frame) =>
      new Promise((resolve) => {
        answer = resolve;
        push(frame);
      }),
  };
}
