import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  type CallbackAnswer,
  type EngineCallback,
  type EngineToWorker,
  EngineToWorkerSchema,
  type ExecutionMode,
} from '@flowbox/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildFlowBundle,
  type FakeAppServer,
  isUpload,
  makeEngineJob,
  prepareEngineArtifacts,
  startFakeAppServer,
  unpackBuiltPieces,
} from '../test/support/index.ts';
import { action, flowOf, pieceStep, writeTestPiece } from '../test/support/isolate-harness.ts';

/**
 * What the worker starts (the built bundle, or the startup snapshot built from
 * dist/engine-snapshot.cjs), and the source they are built from.
 */
const ENTRIES = {
  bundle: fileURLToPath(new URL('../dist/engine.mjs', import.meta.url)),
  snapshot: fileURLToPath(new URL('../dist/engine-snapshot.cjs', import.meta.url)),
  source: fileURLToPath(new URL('./main.ts', import.meta.url)),
};

let dir: string;
/** The snapshot of the real engine, in a folder laid out like the worker's install. */
let blob: string;
/** How long `node --build-snapshot` took, from its start to its exit. */
let buildMs: number;
let app: FakeAppServer;
let child: ChildProcess | undefined;

beforeAll(async () => {
  await access(ENTRIES.bundle).catch(() => {
    throw new Error(`${ENTRIES.bundle} is missing: run \`pnpm build\` first`);
  });
  dir = await mkdtemp(join(tmpdir(), 'flowbox-engine-main-'));
  app = await startFakeAppServer();
  blob = await buildSnapshot(join(dir, 'engine'));
});

/** `node --build-snapshot` of the built snapshot script, beside a link to isolated-vm. */
async function buildSnapshot(engineDir: string): Promise<string> {
  await mkdir(join(engineDir, 'node_modules'), { recursive: true });
  const isolatedVm = dirname(createRequire(import.meta.url).resolve('isolated-vm/package.json'));
  await symlink(isolatedVm, join(engineDir, 'node_modules/isolated-vm'), 'dir');
  await copyFile(ENTRIES.snapshot, join(engineDir, 'engine-snapshot.cjs'));
  const built = join(engineDir, 'engine.blob');
  const started = performance.now();
  const builder = spawn(
    process.execPath,
    ['--snapshot-blob', built, '--build-snapshot', 'engine-snapshot.cjs'],
    {
      cwd: engineDir,
      env: {},
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const [code] = await once(builder, 'exit');
  expect(code, 'node --build-snapshot of dist/engine-snapshot.cjs').toBe(0);
  buildMs = performance.now() - started;
  return built;
}

afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
});

/** How the stand-in worker answers the engine's callbacks: as the app accepting each, by default. */
type AnswerCallback = (callback: EngineCallback) => CallbackAnswer;
const accept: AnswerCallback = () => ({ version: 1, type: 'ok' });

/**
 * Starts an engine the way the worker does (README.md) and reads its frames with the protocol;
 * its callbacks are kept in `callbacks` and answered with `answer`.
 */
function start(entry: keyof typeof ENTRIES, answer: AnswerCallback = accept) {
  const options = {
    env: {},
    serialization: 'json' as const,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'] as ('ignore' | 'pipe' | 'ipc')[],
  };
  const forked =
    entry === 'snapshot'
      ? spawn(process.execPath, ['--snapshot-blob', blob], options)
      : fork(ENTRIES[entry], [], { ...options, execArgv: [] });
  child = forked;
  // Shown as the engine writes it, and kept for the test.
  let stderr = '';
  forked.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    process.stderr.write(chunk);
  });
  const callbacks: EngineCallback[] = [];
  forked.on('message', (frame: unknown) => {
    const message = EngineToWorkerSchema.parse(frame);
    if (message.type !== 'callback') return;
    callbacks.push(message.callback);
    const reply = {
      version: 1,
      type: 'callback-answer',
      callId: message.callId,
      answer: answer(message.callback),
    };
    forked.send(reply);
  });
  const nextMessage = (type?: EngineToWorker['type']): Promise<EngineToWorker> =>
    new Promise((resolve) => {
      const onMessage = (frame: unknown) => {
        const message = EngineToWorkerSchema.parse(frame);
        if (type !== undefined && message.type !== type) return;
        forked.off('message', onMessage);
        resolve(message);
      };
      forked.on('message', onMessage);
    });
  return { child: forked, nextMessage, callbacks, stderr: () => stderr };
}

describe.each(Object.keys(ENTRIES) as (keyof typeof ENTRIES)[])('engine main (%s)', (entry) => {
  it('says ready, drops a bad frame with a log line, and exits when its worker goes away', async () => {
    const engine = start(entry);
    expect(await engine.nextMessage()).toEqual({ version: 1, type: 'ready', pid: engine.child.pid });

    engine.child.send({ version: 1, type: 'execute', requestId: 'r' });
    expect(await engine.nextMessage()).toMatchObject({
      type: 'log',
      level: 'warn',
      msg: 'dropped a bad IPC frame',
    });

    const exited = once(engine.child, 'exit');
    engine.child.disconnect();
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });

  it.each(['SANDBOX_CODE_ONLY', 'UNSANDBOXED'] satisfies ExecutionMode[])(
    'runs the seeded flow in %s, sent the moment it is ready',
    async (executionMode) => {
      const artifacts = await prepareEngineArtifacts(dir);
      const engine = start(entry);
      await engine.nextMessage('ready');
      const job = makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), {
        ...artifacts,
        executionMode,
      });
      // Both listened for before the job goes: they may arrive in one read.
      const [result, logPersisted] = [
        engine.nextMessage('execute-result'),
        engine.nextMessage('log-persisted'),
      ];
      engine.child.send({ version: 1, type: 'execute', requestId: 'req-1', job });
      expect(await result).toMatchObject({
        type: 'execute-result',
        requestId: 'req-1',
        outcome: { status: 'SUCCEEDED', logKey: 'runs/run-1.json' },
        logPending: true,
      });
      // The log's upload follows the result.
      const persisted = await logPersisted;
      expect(persisted).toMatchObject({ requestId: 'req-1', runId: job.runId, logKey: 'runs/run-1.json' });
      expect(persisted).not.toHaveProperty('logError');
      // The response went to the worker over IPC, with the run's token, and not over HTTP.
      expect(engine.callbacks).toMatchObject([
        {
          runId: job.runId,
          engineToken: job.engineToken,
          report: { type: 'flow-response', response: { status: 200, body: { result: 6 } } },
        },
      ]);
      expect(app.requests.filter((request) => request.url.startsWith('/v1/engine/'))).toEqual([]);
    },
  );
});

describe.each(['bundle', 'snapshot'] as const)('a durable run over IPC (%s)', (entry) => {
  it('starts a sub-flow through the worker, pauses at a delay and uploads its checkpoint, not its log', async () => {
    const flow = flowOf(
      { type: 'flow', name: 'child', flowId: 'flow-2', input: { n: 1 }, wait: false },
      { type: 'delay', name: 'later', for: '1h' },
    );
    const artifacts = await prepareEngineArtifacts(dir, flow);
    const engine = start(entry, (callback) =>
      callback.report.type === 'subflow-start'
        ? { version: 1, type: 'subflow-started', runId: 'child-9' }
        : { version: 1, type: 'ok' },
    );
    await engine.nextMessage('ready');
    const key = `checkpoints/${entry}/0.json`;
    const job = makeEngineJob(app.url, app.logUploadUrl(`runs/${entry}.json`), {
      ...artifacts,
      checkpointUpload: { url: app.logUploadUrl(key), fields: { key }, key, maxBytes: 100_000 },
    });
    engine.child.send({ version: 1, type: 'execute', requestId: 'req-3', job });
    expect(await engine.nextMessage('execute-result')).toMatchObject({
      outcome: {
        status: 'PAUSED',
        logKey: null,
        pause: { checkpointKey: key, waits: [{ path: 'later', kind: 'delay' }] },
      },
    });
    expect(engine.callbacks.map((callback) => callback.report)).toContainEqual({
      version: 1,
      type: 'subflow-start',
      path: 'child',
      flowId: 'flow-2',
      input: { n: 1 },
      wait: false,
    });
    const uploads = app.requests.filter((request) => isUpload(request) && request.url.includes(entry));
    expect(uploads.map((upload) => upload.form?.key)).toEqual([key]);
    expect(uploads[0]?.json).toMatchObject({
      steps: { child: { status: 'SUCCEEDED', output: { runId: 'child-9' } }, later: { status: 'WAITING' } },
    });
  });
});

describe('engine callbacks over IPC (bundle)', () => {
  const refusing =
    (code: 'INVALID_RESPONSE' | 'RUN_ALREADY_FINISHED'): AnswerCallback =>
    () => ({ version: 1, type: 'error', error: { code, message: `refused: ${code}` } });

  it.each([
    ['INVALID_RESPONSE', 'FAILED', 'INVALID_RESPONSE'],
    ['RUN_ALREADY_FINISHED', 'INTERNAL_ERROR', 'CALLBACK_FAILED'],
  ] as const)('a response the app refuses with %s ends the run %s with %s', async (refusal, status, code) => {
    const artifacts = await prepareEngineArtifacts(dir);
    const engine = start('bundle', refusing(refusal));
    await engine.nextMessage('ready');
    const job = makeEngineJob(app.url, app.logUploadUrl('runs/run-2.json'), artifacts);
    engine.child.send({ version: 1, type: 'execute', requestId: 'req-2', job });
    const result = await engine.nextMessage('execute-result');
    expect(result).toMatchObject({
      outcome: { status, error: { code, message: expect.stringContaining(`refused: ${refusal}`) } },
    });
  });
});

describe('engines started from one startup snapshot', () => {
  // The blob is built after a warm-up run (snapshot-warm-up-run.ts): no random state it drew,
  // such as crypto.randomUUID's pool, may be in it, or every engine would repeat it.
  it('draw their own random values: two engines upload their logs with different boundaries', async () => {
    const artifacts = await prepareEngineArtifacts(dir);
    const job = makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), artifacts);
    const seen = app.requests.length;
    for (const requestId of ['first', 'second']) {
      const engine = start('snapshot');
      await engine.nextMessage('ready');
      // Both listened for before the job goes: they may arrive in one read.
      const [result, persisted] = [engine.nextMessage('execute-result'), engine.nextMessage('log-persisted')];
      engine.child.send({ version: 1, type: 'execute', requestId, job });
      expect(await result).toMatchObject({ outcome: { status: 'SUCCEEDED' } });
      expect(await persisted).toMatchObject({ requestId });
      const exited = once(engine.child, 'exit');
      engine.child.disconnect();
      await exited;
    }
    const boundaries = app.requests
      .slice(seen)
      .filter(isUpload)
      .map((request) => String(request.headers['content-type']));
    expect(boundaries).toHaveLength(2);
    expect(boundaries[0]).toMatch(/boundary=flowbox-/);
    expect(boundaries[0]).not.toBe(boundaries[1]);
  });

  // The build's warm-up sets and clears timers; had it left Node's next timer deadline at the
  // builder's clock (snapshot-main.ts, nextTimerTurn), an engine whose clock has passed it would
  // never fire a new timer: the piece below would neither crash its engine nor answer.
  it('fire a timer a piece sets once they are older than the build: thrown from it, the error ends the engine, reported', async () => {
    const faults = await writeTestPiece(dir, {
      name: 'faults',
      actions: action(
        'throw_uncaught',
        '()=>{setTimeout(()=>{throw new Error("thrown from a timer")},0);return new Promise(()=>{})}',
      ),
    });
    const pieces = [...(await unpackBuiltPieces(dir)), faults];
    const bundle = buildFlowBundle(flowOf(pieceStep('fault', 'faults', 'throw_uncaught')), {
      pieces: pieces.map(({ name, version }) => ({ name, version })),
    });
    const bundlePath = join(dir, 'bundles', 'faults.json');
    await mkdir(dirname(bundlePath), { recursive: true });
    await writeFile(bundlePath, JSON.stringify(bundle));

    const engine = start('snapshot');
    await engine.nextMessage('ready');
    // Not a wait for an event: the engine's clock must pass any deadline the build's clock could
    // have left, which is at most the build's length plus its warm-up's shortest timer (250 ms).
    await sleep(buildMs + 1_000);
    const exited = once(engine.child, 'exit');
    const job = makeEngineJob(app.url, app.logUploadUrl('runs/faults.json'), { bundlePath, pieces });
    engine.child.send({ version: 1, type: 'execute', requestId: 'faults', job });
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    expect(engine.stderr()).toContain('Error: thrown from a timer');
  });
});
