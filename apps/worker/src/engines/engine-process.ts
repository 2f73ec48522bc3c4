import { getPriority } from 'node:os';
import { defer, type Logger } from '@flowbox/node-kit';
import {
  type CallbackAnswer,
  type EngineCallback,
  type EngineJob,
  type EnginePollJob,
  FlowboxError,
  type PreloadRequest,
  type WorkerToEngine,
} from '@flowbox/protocol';
import { createEngineIpc, type EngineExecution, type PollResultMessage } from './engine-ipc.ts';
import { type EngineLaunch, forwardOutput, spawnEngine } from './engine-launch.ts';
import { EngineLogUploads } from './engine-log-uploads.ts';
import { watchEngineMemory } from './engine-memory-watch.ts';
import { setTreeNiceness } from './engine-priority.ts';

export type { EngineExecution } from './engine-ipc.ts';

/** One forked engine process: boots once, then executes jobs one at a time. */
export interface EngineProcess {
  readonly pid: number;
  /** fork → `ready`, in milliseconds. */
  readonly bootMs: number;
  /** False once the process has exited (or is being killed). */
  readonly alive: boolean;
  /** Jobs handed to this process so far, the one in progress included. */
  readonly jobsServed: number;
  /**
   * Rejects with ENGINE_CRASHED when the process exits before it answers. The engine's
   * callbacks go to `forward` while the job runs, and are refused at any other time. Resolves
   * with the result as soon as the steps end; `persisted` then settles with how the run log's
   * upload, which the engine goes on with, ended.
   */
  execute(
    job: EngineJob,
    forward?: (callback: EngineCallback) => Promise<CallbackAnswer>,
  ): Promise<EngineExecution>;
  /** Resolves once no log upload of this engine is in flight (at once when none is, or it exited). */
  drain(): Promise<void>;
  /** A polling trigger's poll; rejects with ENGINE_CRASHED when the process exits first. */
  poll(job: EnginePollJob): Promise<PollResultMessage>;
  /** Asks an idle engine to import these pieces now; a job sent later waits for it. */
  preload(preload: PreloadRequest): void;
  /**
   * Puts an engine that booted at `niceness` back at the worker's priority, before its job.
   * False when the kernel refuses (engine-priority.ts) or the engine runs in a sandbox.
   */
  restorePriority(): boolean;
  /** SIGKILLs the process and resolves once it has exited. */
  kill(): Promise<void>;
}

export interface EngineProcessOptions extends EngineLaunch {
  logger: Logger;
  bootTimeoutMs?: number;
  /**
   * End the engine by closing its IPC channel (it exits by itself; SIGKILL after 5 s) instead of
   * SIGKILL, so that exit-time work such as writing a `--cpu-prof` profile happens.
   */
  endGracefully?: boolean;
  /**
   * Boots the process at this nice value (a prewarmed spare), until restorePriority(). Not for
   * a sandboxed engine, whose node process is not the one started here.
   */
  niceness?: number;
  /**
   * ENGINE_MEMORY_LIMIT_MB: an engine whose resident memory (its sandbox's processes included)
   * passes this while it runs a job is killed, and the job fails ENGINE_MEMORY_LIMIT.
   */
  memoryLimitBytes?: number;
}

const DEFAULT_BOOT_TIMEOUT_MS = 15_000;
const GRACEFUL_END_MS = 5_000;

export async function startEngineProcess(options: EngineProcessOptions): Promise<EngineProcess> {
  const forkedAt = performance.now();
  const { sandbox } = options;
  const child = spawnEngine(options);
  const logger = options.logger.child({ enginePid: child.pid });
  forwardOutput(child, logger);
  let niced = false;
  if (options.niceness !== undefined && sandbox === undefined && child.pid !== undefined) {
    // A launcher's processes inherit it when they fork: set before they do, as a rule.
    niced = setTreeNiceness(child.pid, options.niceness);
  }

  const ready = defer<void>();
  const exited = defer<void>();
  let alive = true;
  let jobsServed = 0;
  const uploads = new EngineLogUploads();

  const crash = (reason: string) =>
    new FlowboxError('ENGINE_CRASHED', `engine ${child.pid ?? '?'} ${reason}`);

  const ipc = createEngineIpc({ child, logger, uploads, onReady: () => ready.resolve(), crash });

  child.on('error', (error) => {
    logger.error({ err: error }, 'engine process error');
    // A failed spawn emits `error` without `exit`.
    if (child.pid === undefined) onExit(crash(`could not start: ${error.message}`));
  });
  child.on('exit', (code, signal) => {
    logger.info({ code, signal }, 'engine exited');
    onExit(crash(`exited (code ${code}, signal ${signal})`));
  });

  function onExit(error: FlowboxError): void {
    // `exited` (and so kill()) waits for the clean-up: a worker shutting down cleanly leaves no
    // sandbox directory behind in tmp.
    const disposed =
      sandbox === undefined
        ? Promise.resolve()
        : sandbox.dispose().catch((disposeError: unknown) => {
            logger.warn({ err: disposeError }, "could not clean up a sandboxed engine's relay");
          });
    alive = false;
    ready.reject(error);
    ipc.failPending(error);
    uploads.failAll(error.message);
    void disposed.then(() => exited.resolve());
  }

  // Nobody awaits these when the engine dies at an idle moment.
  ready.promise.catch(() => {});
  const bootTimer = setTimeout(() => {
    ready.reject(crash(`sent no ready within ${options.bootTimeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS} ms`));
    child.kill('SIGKILL');
  }, options.bootTimeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS);
  try {
    await ready.promise;
  } finally {
    clearTimeout(bootTimer);
  }
  const bootMs = performance.now() - forkedAt;
  logger.debug({ bootMs }, 'engine ready');

  const pid = child.pid ?? -1;

  /** Ends the job (and the engine) once its memory passes the limit; returns the stop. */
  const watchMemory = (requestId: string): (() => void) => {
    const limitBytes = options.memoryLimitBytes;
    if (limitBytes === undefined) return () => {};
    return watchEngineMemory({
      pid,
      limitBytes,
      onExceeded(rssBytes) {
        if (ipc.pendingId !== requestId) return;
        logger.warn({ rssBytes, limitBytes }, 'engine passed its memory limit: killing it');
        const limitMb = Math.round(limitBytes / 1024 / 1024);
        ipc.fail(
          requestId,
          new FlowboxError(
            'ENGINE_MEMORY_LIMIT',
            `the run took its engine past the ${limitMb} MB memory limit (${Math.round(rssBytes / 1024 / 1024)} MB resident); the engine was stopped`,
          ),
        );
        alive = false;
        child.kill('SIGKILL');
      },
    });
  };

  /** Why the engine cannot take a request now (exited, or busy with one), as the rejection to return. */
  const refusal = (): Promise<never> | undefined => {
    if (!alive) return Promise.reject(crash('is not running'));
    if (ipc.pendingId !== undefined) {
      return Promise.reject(new FlowboxError('INTERNAL', `engine ${pid} is already executing a job`));
    }
    return undefined;
  };

  return {
    pid,
    bootMs,
    get alive() {
      return alive;
    },
    get jobsServed() {
      return jobsServed;
    },
    execute(job, forward) {
      const refused = refusal();
      if (refused !== undefined) return refused;
      const admit = sandbox === undefined ? undefined : (sent: EngineJob) => sandbox.admit(sent);
      jobsServed += 1;
      const { requestId, answer } = ipc.request(job, job.runId, forward, admit, 'job', (id, sent) => ({
        version: 1,
        type: 'execute',
        requestId: id,
        job: sent,
      }));
      const stopWatch = watchMemory(requestId);
      answer.then(stopWatch, stopWatch);
      const executed = answer.then((message) => {
        if (message.type !== 'execute-result') throw crash('answered a run with a poll result');
        return message;
      });
      if (sandbox === undefined) return executed;
      return executed
        .then((execution) => {
          // The log's upload goes on through the relay until it ends.
          const upload = execution.persisted ?? Promise.resolve();
          void upload.then(() => sandbox.endUpload(job.runId));
          return execution;
        })
        .finally(() => sandbox.release());
    },
    poll(job) {
      const refused = refusal();
      if (refused !== undefined) return refused;
      const admit = sandbox === undefined ? undefined : (sent: EnginePollJob) => sandbox.admitPoll(sent);
      jobsServed += 1;
      const { answer } = ipc.request(job, undefined, undefined, admit, 'poll', (id, sent) => ({
        version: 1,
        type: 'execute-poll',
        requestId: id,
        job: sent,
      }));
      const polled = answer.then((message) => {
        if (message.type !== 'poll-result') throw crash('answered a poll with a run result');
        return message;
      });
      return sandbox === undefined ? polled : polled.finally(() => sandbox.release());
    },
    drain: () => uploads.drain(),
    preload({ pieces, codeStepMemoryMb, appUrl, isolation, isolateMaxRuns }) {
      if (!alive) return;
      const message: WorkerToEngine = {
        version: 1,
        type: 'preload',
        pieces,
        ...(codeStepMemoryMb === undefined ? {} : { codeStepMemoryMb }),
        ...(appUrl === undefined || sandbox !== undefined ? {} : { appUrl }),
        ...(isolation === undefined ? {} : { isolation }),
        ...(isolateMaxRuns === undefined ? {} : { isolateMaxRuns }),
      };
      const send = () =>
        child.send(message, (error) => {
          if (error) logger.warn({ error: error.message }, 'could not ask the engine to preload pieces');
        });
      if (sandbox === undefined) return void send();
      // Before any job's admit: the view's changes run in order, so the preload is sent first.
      sandbox.expose(pieces).then(send, (error: unknown) => {
        logger.warn({ err: error }, 'could not show a sandboxed engine the pieces to preload');
      });
    },
    restorePriority() {
      if (!niced) return true;
      niced = !setTreeNiceness(pid, getPriority());
      return !niced;
    },
    async kill() {
      if (alive) {
        alive = false;
        if (options.endGracefully === true && child.connected) {
          child.disconnect();
          const forced = setTimeout(() => child.kill('SIGKILL'), GRACEFUL_END_MS);
          await exited.promise;
          clearTimeout(forced);
        } else child.kill('SIGKILL');
      }
      await exited.promise;
    },
  };
}
