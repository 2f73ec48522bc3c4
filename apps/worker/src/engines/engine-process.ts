import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { getPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { type Deferred, defer, type Logger } from '@flowbox/node-kit';
import {
  type CallbackAnswer,
  callbackRefusal,
  type EngineCallback,
  type EngineJob,
  type EnginePollJob,
  type EngineToWorker,
  EngineToWorkerSchema,
  type ExecuteResult,
  FlowboxError,
  type LogPersisted,
  type PreloadRequest,
  parseMessage,
  type WorkerToEngine,
} from '@flowbox/protocol';
import { EngineLogUploads } from './engine-log-uploads.ts';
import { watchEngineMemory } from './engine-memory-watch.ts';
import { setTreeNiceness } from './engine-priority.ts';

type PollResultMessage = Extract<EngineToWorker, { type: 'poll-result' }>;

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

/** An execute result; for one with `logPending`, how the upload that follows it ended (never rejects). */
export type EngineExecution = ExecuteResult & { persisted?: Promise<LogPersisted> };

export interface EngineProcessOptions {
  entry: string;
  /**
   * A startup snapshot of the engine (engine-snapshot.ts): the process starts from it
   * (`node --snapshot-blob <blob>`) instead of loading `entry`.
   */
  snapshotBlob?: string | undefined;
  logger: Logger;
  /** Node flags for the engine; the worker's own flags are not inherited. */
  execArgv?: string[];
  /** The engine's environment; empty by default so it never sees the worker's token. */
  env?: Record<string, string>;
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
  /** Starts the engine inside a sandbox instead of forking it (EXECUTION_MODE=SANDBOXED). */
  sandbox?: EngineSandbox;
  /**
   * A command the engine's node runs under, with the IPC channel and environment passed through
   * (bubblewrap.ts's pidNamespaceLauncher): `pid` is then the launcher's, the engine's ancestor.
   */
  launcher?: { command: string; args: string[] };
  /**
   * ENGINE_MEMORY_LIMIT_MB: an engine whose resident memory (its sandbox's processes included)
   * passes this while it runs a job is killed, and the job fails ENGINE_MEMORY_LIMIT.
   */
  memoryLimitBytes?: number;
}

/** A sandboxed engine's launch (sandbox/sandboxed-engine.ts) and its relay. */
export interface EngineSandbox {
  /** The command that ends by running node on the entry, inside the sandbox. */
  command: string;
  args: string[];
  /** File descriptors the command reads, passed after the IPC channel (fd 4 onwards). */
  extraFds: number[];
  /**
   * Shows the sandbox this job's bundle and pieces (and nothing else of the cache), lets its
   * traffic through the relay, and returns the job as the engine must see it.
   */
  admit(job: EngineJob): Promise<EngineJob>;
  /** As `admit`, for a poll: its bundle and pieces, and its fetches through the relay. */
  admitPoll(job: EnginePollJob): Promise<EnginePollJob>;
  /** Shows the sandbox these pieces, for a preload before any job. */
  expose(pieces: EngineJob['pieces']): Promise<void>;
  /** The job is over: its traffic is refused (its files stay until the next job is admitted). */
  release(): Promise<void>;
  /** The run's log upload, which may outlast its job, ended: its relay path is refused. */
  endUpload(runId: string): void;
  /** The engine has exited: close the relay, remove what the launch made. */
  dispose(): Promise<void>;
}

const DEFAULT_BOOT_TIMEOUT_MS = 15_000;
const GRACEFUL_END_MS = 5_000;

export async function startEngineProcess(options: EngineProcessOptions): Promise<EngineProcess> {
  const forkedAt = performance.now();
  const { sandbox } = options;
  const { snapshotBlob } = options;
  const nodeArgs = [
    ...(options.execArgv ?? []),
    // With a snapshot, Node's arguments take the place of a script to load.
    ...(snapshotBlob !== undefined ? ['--snapshot-blob', snapshotBlob] : [options.entry]),
  ];
  const { launcher } = options;
  const [command, args] =
    sandbox !== undefined
      ? [sandbox.command, sandbox.args]
      : launcher !== undefined
        ? [launcher.command, [...launcher.args, process.execPath, ...nodeArgs]]
        : [process.execPath, nodeArgs];
  // What fork() does, with the launcher (if any) in front.
  const child = spawn(command, args, {
    env: options.env ?? {},
    stdio: ['ignore', 'pipe', 'pipe', 'ipc', ...(sandbox?.extraFds ?? [])],
    serialization: 'json',
  });
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
  let pending:
    | {
        requestId: string;
        /** The run's id; undefined for a poll. */
        runId: string | undefined;
        result: Deferred<EngineExecution | PollResultMessage>;
        forward: ((callback: EngineCallback) => Promise<CallbackAnswer>) | undefined;
      }
    | undefined;
  const uploads = new EngineLogUploads();

  const crash = (reason: string) =>
    new FlowboxError('ENGINE_CRASHED', `engine ${child.pid ?? '?'} ${reason}`);

  child.on('message', (frame: unknown) => {
    const parsed = parseMessage(EngineToWorkerSchema, frame);
    if (!parsed.ok) {
      logger.warn({ error: parsed.error }, 'dropped a bad IPC frame from the engine');
      return;
    }
    const message = parsed.value;
    switch (message.type) {
      case 'ready':
        ready.resolve();
        return;
      case 'log':
        logger[message.level](message.data ?? {}, message.msg);
        return;
      case 'poll-result':
        if (pending?.requestId !== message.requestId) {
          logger.warn({ requestId: message.requestId }, 'dropped a poll result nobody waits for');
          return;
        }
        pending.result.resolve(message);
        pending = undefined;
        return;
      case 'execute-result': {
        if (pending?.requestId !== message.requestId) {
          logger.warn({ requestId: message.requestId }, 'dropped an execute result nobody waits for');
          return;
        }
        const { logKey } = message.outcome;
        if (message.logPending === true && logKey !== null && pending.runId !== undefined) {
          const persisted = uploads.track(message.requestId, pending.runId, logKey);
          pending.result.resolve({ ...message, persisted });
        } else pending.result.resolve(message);
        pending = undefined;
        return;
      }
      case 'log-persisted':
        uploads.settle(message);
        return;
      case 'callback':
        void answerCallback(message.callId, message.callback);
        return;
    }
  });

  async function answerCallback(callId: number, callback: EngineCallback): Promise<void> {
    const forward = pending?.forward;
    let answer: CallbackAnswer;
    if (forward === undefined) {
      logger.warn({ runId: callback.runId }, 'refused a callback: no job is in progress');
      answer = callbackRefusal('FORBIDDEN', 'no job is in progress');
    } else {
      answer = await forward(callback).catch((error: unknown) =>
        callbackRefusal('CALLBACK_FAILED', error instanceof Error ? error.message : String(error)),
      );
    }
    if (!child.connected) return;
    const reply: WorkerToEngine = { version: 1, type: 'callback-answer', callId, answer };
    child.send(reply, (error) => {
      if (error) logger.warn({ error: error.message }, 'could not answer a callback');
    });
  }
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
    pending?.result.reject(error);
    pending = undefined;
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
        if (pending?.requestId !== requestId) return;
        logger.warn({ rssBytes, limitBytes }, 'engine passed its memory limit: killing it');
        const limitMb = Math.round(limitBytes / 1024 / 1024);
        pending.result.reject(
          new FlowboxError(
            'ENGINE_MEMORY_LIMIT',
            `the run took its engine past the ${limitMb} MB memory limit (${Math.round(rssBytes / 1024 / 1024)} MB resident); the engine was stopped`,
          ),
        );
        pending = undefined;
        alive = false;
        child.kill('SIGKILL');
      },
    });
  };

  /** Why the engine cannot take a request now (exited, or busy with one), as the rejection to return. */
  const refusal = (): Promise<never> | undefined => {
    if (!alive) return Promise.reject(crash('is not running'));
    if (pending !== undefined) {
      return Promise.reject(new FlowboxError('INTERNAL', `engine ${pid} is already executing a job`));
    }
    return undefined;
  };

  /**
   * Sends one request (a run or a poll) and holds it as `pending` until the engine answers, exits
   * or cannot receive it; a sandboxed engine's relay admits the job first (it may rewrite it).
   */
  function request<J>(
    job: J,
    runId: string | undefined,
    forward: ((callback: EngineCallback) => Promise<CallbackAnswer>) | undefined,
    admit: ((job: J) => Promise<J>) | undefined,
    what: string,
    wrap: (requestId: string, job: J) => WorkerToEngine,
  ): { requestId: string; answer: Promise<EngineExecution | PollResultMessage> } {
    jobsServed += 1;
    const requestId = randomUUID();
    const result = defer<EngineExecution | PollResultMessage>();
    pending = { requestId, runId, result, forward };
    const fail = (error: FlowboxError) => {
      if (pending?.requestId !== requestId) return;
      pending.result.reject(error);
      pending = undefined;
    };
    const deliver = (sent: J) => {
      child.send(wrap(requestId, sent), (error) => {
        if (error) fail(crash(`could not receive the ${what}: ${error.message}`));
      });
    };
    if (admit === undefined) deliver(job);
    else {
      admit(job).then(deliver, (error: unknown) => {
        fail(error instanceof FlowboxError ? error : new FlowboxError('PROVISION_FAILED', String(error)));
      });
    }
    return { requestId, answer: result.promise };
  }

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
      const { requestId, answer } = request(job, job.runId, forward, admit, 'job', (id, sent) => ({
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
      const { answer } = request(job, undefined, undefined, admit, 'poll', (id, sent) => ({
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

/** The engine logs over IPC; anything on stdout/stderr is unexpected (a crash trace) and kept. */
function forwardOutput(child: ChildProcess, logger: Logger): void {
  for (const [stream, source] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    if (source === null) continue;
    createInterface({ input: source }).on('line', (line) => logger.warn({ stream }, line));
  }
}
