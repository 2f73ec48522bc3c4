import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import path from 'node:path';
import { createFetchBudget, type EgressFetch, type FetchBudget, type FetchSlot } from '@flowbox/egress';
import type { Logger } from '@flowbox/node-kit';
import {
  type EgressPolicy,
  type EngineJob,
  FlowboxError,
  parseMessage,
  RELAY_ORIGIN,
  RELAY_PATHS,
  type RelayFetchAnswer,
  RelayFetchRequestSchema,
  serializeError,
} from '@flowbox/protocol';

/**
 * The sandboxed engine's only way out besides its IPC channel (which carries its callbacks to
 * the app): an HTTP server on a Unix socket bound into its sandbox. While a run is admitted, it
 * forwards code steps' fetch under the egress policy. A run's log upload, which follows the run's
 * result while the next run may already be admitted, goes to a path of its own (an unguessable
 * token) that forwards to that run's presigned form until `endUpload`. It refuses everything
 * else with 403, and every fetch between runs. A piece that
 * talks to the socket itself gets no further than the engine would: its fetches too are held to
 * the run's budget (job.fetchLimits) here, before their bodies are read, whatever the engine did.
 */
export interface EngineRelay {
  readonly socketDir: string;
  /** Lets this job's traffic through, and returns the job as the sandboxed engine must see it. */
  admit(job: EngineJob): EngineJob;
  /** Lets a poll's fetches through, under its egress policy and budget (it has no other traffic). */
  admitPoll(job: Pick<EngineJob, 'egress' | 'fetchLimits'>): void;
  /** The job is over: no fetch passes until the next one is admitted (its log upload still may). */
  release(): void;
  /** The run's log upload ended (or never will): its path is refused from now on. */
  endUpload(runId: string): void;
  close(): Promise<void>;
}

export interface EngineRelayOptions {
  /** A directory of its own: the socket is created in it, and it is removed on close. */
  socketDir: string;
  egressFetch(policy: EgressPolicy, budget: FetchBudget): EgressFetch;
  logger: Logger;
  /** Largest request body passed on (a run log upload is the largest). */
  maxBodyBytes?: number;
}

interface Admitted {
  /** The job's checkpoint form (it can pause), and a resumed run's checkpoint to read. */
  checkpointUploadUrl: string | undefined;
  checkpointUrl: string | undefined;
  egress: EgressFetch;
  budget: FetchBudget;
  /** Cancels what is in flight for this run when it is released. */
  aborts: AbortController;
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** A run's log upload path: this, then its token. */
const UPLOAD_PREFIX = `${RELAY_PATHS.logUpload}/`;

export async function startEngineRelay(options: EngineRelayOptions): Promise<EngineRelay> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  await mkdir(options.socketDir, { recursive: true, mode: 0o755 });
  const socketPath = path.join(options.socketDir, 'relay.sock');
  let admitted: Admitted | undefined;
  /** Log uploads still allowed, by their path's token: the run's presigned form. */
  const uploads = new Map<string, { runId: string; url: string; aborts: AbortController }>();
  // Every run of this engine calls the same app and S3 endpoint: keep the connections.
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      options.logger.warn({ err: error }, 'the engine relay failed a request');
      if (!response.headersSent) sendJson(response, 502, { error: serializeError(error, 'INTERNAL') });
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const run = admitted;
    const url = request.url ?? '';
    const upload = url.startsWith(UPLOAD_PREFIX) ? uploads.get(url.slice(UPLOAD_PREFIX.length)) : undefined;
    if (run === undefined && upload === undefined) {
      return refuse(response, `no run is in progress: ${request.method} ${url} refused`);
    }
    if (request.method === 'GET' && url === RELAY_PATHS.checkpoint && run?.checkpointUrl !== undefined) {
      return forward(run.aborts.signal, run.checkpointUrl, request, null, response, []);
    }
    if (request.method !== 'POST') return refuse(response, `${request.method} ${url} is not relayed`);
    if (url === RELAY_PATHS.fetch && run !== undefined) return relayFetch(run, request, response);
    // A log upload by its run's token (it may follow the run's release), or the admitted run's checkpoint.
    const target =
      upload !== undefined
        ? { signal: upload.aborts.signal, url: upload.url }
        : url === RELAY_PATHS.checkpointUpload && run?.checkpointUploadUrl !== undefined
          ? { signal: run.aborts.signal, url: run.checkpointUploadUrl }
          : undefined;
    if (target === undefined) return refuse(response, `POST ${url} is not relayed`);
    const body = await readBody(request, maxBodyBytes);
    if (body === null) return refuse(response, `the request body is over ${maxBodyBytes} bytes`);
    return forward(target.signal, target.url, request, body, response, ['content-type']);
  }

  /**
   * A code step's fetch, in a slot of the run's budget taken before its body is read and given
   * back once the answer is written. It ends when the run is released or when the engine goes
   * away from it (the step ended or timed out), whatever is in flight.
   */
  async function relayFetch(
    run: Admitted,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const gone = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished)
        gone.abort(new FlowboxError('CODE_STEP_TIMEOUT', 'the code step ended'));
    });
    const signal = AbortSignal.any([run.aborts.signal, gone.signal]);
    let slot: FetchSlot;
    try {
      slot = await run.budget.acquire(signal, 0);
    } catch (error) {
      if (signal.aborted) return void request.destroy();
      return sendJson(response, 200, { error: serializeError(error, 'CODE_STEP_FETCH_LIMIT') });
    }
    // Ended while the slot was being granted (its close may have fired already).
    if (signal.aborted) {
      slot.release();
      return void response.destroy();
    }
    response.on('close', () => slot.release());
    let answer: RelayFetchAnswer;
    try {
      const parsed = parseMessage(RelayFetchRequestSchema, safeJson(await readHeldBody(request, slot)));
      answer = parsed.ok
        ? { response: await run.egress(parsed.value, signal, slot) }
        : { error: { code: 'CODE_STEP_FETCH_FAILED', message: `fetch failed: ${parsed.error}` } };
    } catch (error) {
      if (signal.aborted) return void response.destroy();
      const { code, message } = serializeError(error, 'CODE_STEP_FETCH_FAILED');
      answer = { error: { code, message } };
    }
    sendJson(response, 200, answer);
  }

  /** Passes the request on (a POST with `body`, a GET without) with the given headers only, and streams the answer back. */
  function forward(
    signal: AbortSignal,
    target: string,
    request: IncomingMessage,
    body: Buffer | null,
    response: ServerResponse,
    headerNames: string[],
  ): Promise<void> {
    const headers: Record<string, string> =
      body === null ? {} : { 'content-length': String(body.byteLength) };
    for (const name of headerNames) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const url = new URL(target);
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const upstream = send(url, {
        method: body === null ? 'GET' : 'POST',
        headers,
        agent: secure ? agents.https : agents.http,
        signal,
      });
      upstream.on('error', reject);
      upstream.on('response', (answer) => {
        response.writeHead(answer.statusCode ?? 502, {
          'content-type': answer.headers['content-type'] ?? 'application/octet-stream',
        });
        answer.pipe(response);
        answer.on('end', resolve);
        answer.on('error', reject);
      });
      if (body === null) upstream.end();
      else upstream.end(body);
    });
  }

  function budgeted(job: Pick<EngineJob, 'egress' | 'fetchLimits'>): Pick<Admitted, 'egress' | 'budget'> {
    const budget = createFetchBudget(job.fetchLimits);
    return { budget, egress: options.egressFetch(job.egress, budget) };
  }

  function refuse(response: ServerResponse, message: string): void {
    options.logger.warn({ message }, 'the engine relay refused a request');
    sendJson(response, 403, { error: { code: 'RELAY_REFUSED', message } });
  }

  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });

  return {
    socketDir: options.socketDir,
    admit(job) {
      admitted?.aborts.abort();
      admitted = {
        checkpointUploadUrl: job.checkpointUpload?.url,
        checkpointUrl: job.resume?.checkpoint.url,
        ...budgeted(job),
        aborts: new AbortController(),
      };
      const token = randomUUID();
      uploads.set(token, { runId: job.runId, url: job.logUpload.url, aborts: new AbortController() });
      const seen: EngineJob = {
        ...job,
        appUrl: RELAY_ORIGIN,
        logUpload: { ...job.logUpload, url: `${RELAY_ORIGIN}${UPLOAD_PREFIX}${token}` },
      };
      if (job.checkpointUpload !== undefined) {
        seen.checkpointUpload = {
          ...job.checkpointUpload,
          url: `${RELAY_ORIGIN}${RELAY_PATHS.checkpointUpload}`,
        };
      }
      if (job.resume !== undefined) {
        seen.resume = {
          ...job.resume,
          checkpoint: { ...job.resume.checkpoint, url: `${RELAY_ORIGIN}${RELAY_PATHS.checkpoint}` },
        };
      }
      return seen;
    },
    admitPoll(job) {
      admitted?.aborts.abort();
      admitted = {
        checkpointUploadUrl: undefined,
        checkpointUrl: undefined,
        ...budgeted(job),
        aborts: new AbortController(),
      };
    },
    release() {
      admitted?.aborts.abort(new FlowboxError('INTERNAL', 'the run is over'));
      admitted = undefined;
    },
    endUpload(runId) {
      for (const [token, upload] of uploads) {
        if (upload.runId !== runId) continue;
        upload.aborts.abort(new FlowboxError('INTERNAL', "the run's log upload is over"));
        uploads.delete(token);
      }
    },
    async close() {
      admitted?.aborts.abort();
      admitted = undefined;
      for (const upload of uploads.values()) upload.aborts.abort();
      uploads.clear();
      server.closeAllConnections();
      agents.http.destroy();
      agents.https.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(options.socketDir, { recursive: true, force: true });
    },
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(bytes.byteLength),
  });
  response.end(bytes);
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > maxBytes) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A fetch request's body, each chunk counted against the run's budget as it arrives. */
async function readHeldBody(request: IncomingMessage, slot: FetchSlot): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of request) {
      slot.hold((chunk as Buffer).byteLength);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    request.destroy();
    throw error;
  }
  return Buffer.concat(chunks);
}

function safeJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}
