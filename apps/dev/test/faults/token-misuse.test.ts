// Fault-injection row "token misuse": run A's engine token on run B, a token after its
// run ended, tampered / expired / `alg: none` / wrong-audience tokens, and worker and engine
// tokens swapped. Must hold: 401 or 403 every time, and nothing written. Each callback is tried
// on both doors the app keeps for it: HTTP, and a worker's socket forwarding its engine's report
// (`engine-callback`), where a worker token adds no authority to the engine token it carries.
//
// The tokens are minted here with node:crypto (jwt-mint.ts) against the HTTP contract, not
// through the app's TokenService, so the test holds whatever implements it.
import {
  type DispatchedJob,
  ENGINE_CALLBACK_PATHS,
  type EngineCallbackFrame,
  type EngineReport,
  type FinalRunStatus,
  type FlowResponseReport,
  type JobResult,
  type PollReply,
  type SerializedError,
  type StepReport,
  type StepResult,
} from '@flowbox/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../../../app/src/app.ts';
import {
  getRun,
  postJson,
  type RunView,
  startTestApp,
  TEST_TOKEN_SECRET,
  waitForFinalRun,
} from '../../../app/test/app-harness.ts';
import {
  decodePayload,
  engineClaims,
  HS256_HEADER,
  signJwt,
  unsignedJwt,
  withFlippedSignature,
  withForgedPayload,
  workerClaims,
} from './jwt-mint.ts';
import { RawSocketIo } from './socket-io-wire.ts';

function step(name: string, output: unknown): StepResult {
  return {
    name,
    kind: 'test',
    status: 'SUCCEEDED',
    input: {},
    output,
    startedAt: new Date().toISOString(),
    durationMs: 1,
  };
}

// Typed with the protocol's own types, so every body is valid and a refusal is the token's doing.
const stepReport = (name: string): StepReport => ({
  version: 1,
  type: 'steps',
  steps: [step(name, { by: name })],
});
const responseReport = (body: unknown): FlowResponseReport => ({
  version: 1,
  type: 'flow-response',
  response: { status: 200, headers: { 'x-forged': 'maybe' }, body },
  steps: [],
});
/** A worker's result that carries no steps: the app records those the engine reported. */
const jobResult = (job: DispatchedJob, status: FinalRunStatus, error?: SerializedError): JobResult => ({
  version: 1,
  type: 'job-result',
  workerId: 'w',
  jobId: job.jobId,
  runId: job.runId,
  outcome: { status, ...(error === undefined ? {} : { error }), steps: [], logKey: null },
  timings: { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 1, logPersistMs: 0, workerBusyMs: 1 },
});

/** What a misused token could change on a run, as a user reads it. */
function observable(run: RunView) {
  return {
    status: run.status,
    steps: run.steps,
    error: run.error,
    logKey: run.logKey,
    logError: run.logError,
  };
}

describe('token misuse against the engine callbacks and the worker channel', () => {
  let app: FlowboxApp;
  let url: string;
  const sockets: RawSocketIo[] = [];

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '20' }));
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await app?.close();
  });

  function callback(path: string, body: unknown, token: string | null): Promise<Response> {
    return postJson(`${url}${path}`, body, token === null ? {} : { authorization: `Bearer ${token}` });
  }

  /** The report as a worker forwards its engine's callback; resolves with the app's answer. */
  function socketCallback(worker: RawSocketIo, runId: string, report: EngineReport, token: string) {
    const frame: EngineCallbackFrame = {
      version: 1,
      type: 'engine-callback',
      callback: { runId, engineToken: token, report },
    };
    return worker.emitWithAck('engine-callback', frame);
  }

  async function connectWorker(name: string): Promise<RawSocketIo> {
    const outcome = await RawSocketIo.connect(url, signJwt(TEST_TOKEN_SECRET, workerClaims(name)));
    if (!outcome.ok) throw new Error(`worker ${name} refused: ${outcome.message}`);
    sockets.push(outcome.socket);
    return outcome.socket;
  }

  /** Polls as a worker until the job whose trigger body carries `tag` comes; RUNNING from then on. */
  async function leaseJob(worker: RawSocketIo, tag: string): Promise<DispatchedJob> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const reply = (await worker.emitWithAck('poll', {
        version: 1,
        type: 'poll',
        workerId: 'w',
      })) as PollReply;
      if (reply.type === 'idle') continue;
      if (reply.type !== 'job') throw new Error(`poll failed: ${JSON.stringify(reply)}`);
      expect(reply.job.trigger.body).toEqual({ tag });
      return reply.job;
    }
    throw new Error(`no job for ${tag}`);
  }

  const waitForFinal = (runId: string) => waitForFinalRun(() => getRun(url, runId), runId, 10_000);

  /** Ends a run the way its worker does: with its job result, which the app records. */
  async function endAsWorker(
    job: DispatchedJob,
    worker: RawSocketIo,
    status: FinalRunStatus,
    error?: SerializedError,
  ) {
    expect(await worker.emitWithAck('job-result', jobResult(job, status, error))).toMatchObject({
      type: 'ok',
    });
    return waitForFinal(job.runId);
  }

  /**
   * Every callback with `token` on `runId`, over HTTP and over `worker`'s socket: each must be
   * refused with `status` (HTTP) and `code`, and write nothing.
   */
  async function expectRefusedEverywhere(
    runId: string,
    token: string,
    status: number,
    code: string,
    worker: RawSocketIo,
  ) {
    const before = observable(await getRun(url, runId));
    const attempts = [
      [ENGINE_CALLBACK_PATHS.steps(runId), stepReport('forged')],
      [ENGINE_CALLBACK_PATHS.response(runId), responseReport({ forged: true })],
    ] as const;
    for (const [path, body] of attempts) {
      const response = await callback(path, body, token);
      expect(response.status, `${path} with ${token.slice(0, 40)}`).toBe(status);
      expect(await response.json()).toMatchObject({ error: { code } });
      expect(await socketCallback(worker, runId, body, token), `socket ${body.type}`).toEqual({
        version: 1,
        type: 'error',
        error: { code, message: expect.any(String) },
      });
    }
    expect(observable(await getRun(url, runId))).toEqual(before);
  }

  it("refuses run A's engine token on run B with 403 on every callback: B's caller, steps and verdict stay B's", async () => {
    const workerA = await connectWorker('worker-a');
    const workerB = await connectWorker('worker-b');
    expect((await postJson(`${url}/v1/webhooks/benchmark`, { tag: 'A' })).status).toBe(202);
    const jobA = await leaseJob(workerA, 'A');
    const callerB = postJson(`${url}/v1/webhooks/benchmark/sync`, { tag: 'B' });
    const jobB = await leaseJob(workerB, 'B');
    expect((await getRun(url, jobB.runId)).status).toBe('RUNNING');

    // The app's own token for A, and one minted here for A: both refused on B.
    // On B's worker's socket too: the worker that holds B forwards nothing but B's token.
    await expectRefusedEverywhere(jobB.runId, jobA.engineToken, 403, 'FORBIDDEN', workerB);
    const mintedForA = signJwt(TEST_TOKEN_SECRET, engineClaims(jobA.runId));
    await expectRefusedEverywhere(jobB.runId, mintedForA, 403, 'FORBIDDEN', workerB);

    // The control: B's own token is accepted, so the refusals above were about the run alone:
    // progress over HTTP, the response over B's worker's socket.
    const steps = await callback(
      ENGINE_CALLBACK_PATHS.steps(jobB.runId),
      stepReport('trigger'),
      jobB.engineToken,
    );
    expect(steps.status).toBe(204);
    expect(
      await socketCallback(workerB, jobB.runId, responseReport({ legit: 'B' }), jobB.engineToken),
    ).toEqual({ version: 1, type: 'ok' });
    // B's caller got B's response, not the one forged with A's token before it.
    const answer = await callerB;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-forged')).toBe('maybe');
    expect(await answer.json()).toEqual({ legit: 'B' });

    // B's worker reports the end; the app records B with what B's engine reported, and nothing else.
    const runB = await endAsWorker(jobB, workerB, 'SUCCEEDED');
    expect(runB.status).toBe('SUCCEEDED');
    expect(runB.steps.map((s) => s.name)).toEqual(['trigger']);

    // A was never touched by any of this: it ends as its own engine says.
    const failure = { name: 'Error', code: 'CODE_STEP_FAILED', message: 'A ends', step: 'step_1' } as const;
    const runA = await endAsWorker(jobA, workerA, 'FAILED', failure);
    expect(runA.status).toBe('FAILED');
    expect(runA.error).toMatchObject({ code: 'CODE_STEP_FAILED', message: 'A ends' });
    expect(runA.steps).toEqual([]);
  });

  it('refuses a missing, tampered, expired, unsigned, foreign or wrong-audience token with 401, writing nothing', async () => {
    const worker = await connectWorker('worker-c');
    expect((await postJson(`${url}/v1/webhooks/benchmark`, { tag: 'C' })).status).toBe(202);
    const job = await leaseJob(worker, 'C');
    const runId = job.runId;
    const claims = decodePayload(job.engineToken);
    expect(claims).toMatchObject({ iss: 'flowbox', aud: 'flowbox-engine', sub: runId });
    const now = Math.floor(Date.now() / 1000);

    const refused: Record<string, string | null> = {
      'no token': null,
      'not a JWT': 'x.y.z',
      'empty signature': `${job.engineToken.split('.').slice(0, 2).join('.')}.`,
      'flipped signature': withFlippedSignature(job.engineToken),
      // A forger keeps the signature and changes the claims: longer life, another run's subject.
      'payload changed, signature kept': withForgedPayload(job.engineToken, { ...claims, exp: now + 86_400 }),
      'another secret': signJwt('not-the-secret-not-the-secret-not!', engineClaims(runId)),
      'expired an hour ago': signJwt(
        TEST_TOKEN_SECRET,
        engineClaims(runId, { iat: now - 3_660, exp: now - 3_600 }),
      ),
      'no expiry': signJwt(TEST_TOKEN_SECRET, engineClaims(runId, { exp: undefined })),
      'wrong audience': signJwt(TEST_TOKEN_SECRET, engineClaims(runId, { aud: 'flowbox-admin' })),
      'worker audience': signJwt(TEST_TOKEN_SECRET, engineClaims(runId, { aud: 'flowbox-worker' })),
      'wrong issuer': signJwt(TEST_TOKEN_SECRET, engineClaims(runId, { iss: 'evil' })),
      'a worker token': signJwt(TEST_TOKEN_SECRET, workerClaims('worker-c')),
      'alg none': unsignedJwt(engineClaims(runId), 'none'),
      'alg None': unsignedJwt(engineClaims(runId), 'None'),
      'alg NONE': unsignedJwt(engineClaims(runId), 'NONE'),
      // alg none with the HS256 signature still attached: the header alone must not decide.
      'alg none, signed': signJwt(TEST_TOKEN_SECRET, engineClaims(runId), { alg: 'none', typ: 'JWT' }),
    };
    for (const [name, token] of Object.entries(refused)) {
      const before = observable(await getRun(url, runId));
      for (const [path, body] of [
        [ENGINE_CALLBACK_PATHS.steps(runId), stepReport(`forged: ${name}`)],
        [ENGINE_CALLBACK_PATHS.response(runId), responseReport({ forged: name })],
      ] as const) {
        const response = await callback(path, body, token);
        expect(response.status, `${name} on ${path}`).toBe(401);
        expect(await response.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
        // Over the socket a callback without a token is not even a frame the app reads.
        expect(await socketCallback(worker, runId, body, token ?? ''), `${name} on the socket`).toMatchObject(
          {
            type: 'error',
            error: { code: token === null ? 'INVALID_REQUEST' : 'UNAUTHORIZED' },
          },
        );
      }
      expect(observable(await getRun(url, runId)), name).toEqual(before);
    }

    // The control: the same claims signed properly with the same header are accepted.
    const minted = signJwt(TEST_TOKEN_SECRET, engineClaims(runId), HS256_HEADER);
    expect((await callback(ENGINE_CALLBACK_PATHS.steps(runId), stepReport('trigger'), minted)).status).toBe(
      204,
    );
    expect((await getRun(url, runId)).steps.map((s) => s.name)).toEqual(['trigger']);

    const run = await endAsWorker(job, worker, 'SUCCEEDED');
    expect(run).toMatchObject({ status: 'SUCCEEDED', error: null });
    expect(run.steps.map((s) => s.name)).toEqual(['trigger']);
  });

  it('refuses a valid engine token once its run has ended: 403 RUN_ALREADY_FINISHED, the record unchanged', async () => {
    const worker = await connectWorker('worker-d');
    expect((await postJson(`${url}/v1/webhooks/benchmark`, { tag: 'D' })).status).toBe(202);
    const job = await leaseJob(worker, 'D');
    expect(
      (await callback(ENGINE_CALLBACK_PATHS.steps(job.runId), stepReport('trigger'), job.engineToken)).status,
    ).toBe(204);
    const ended = await endAsWorker(job, worker, 'SUCCEEDED');
    expect(ended.status).toBe('SUCCEEDED');

    // The token has not expired (its life is the flow timeout plus a grace), only its run has.
    expect(Number(decodePayload(job.engineToken).exp)).toBeGreaterThan(Date.now() / 1000 + 30);
    await expectRefusedEverywhere(job.runId, job.engineToken, 403, 'RUN_ALREADY_FINISHED', worker);
    const after = await getRun(url, job.runId);
    expect(observable(after)).toEqual(observable(ended));
    expect(after.steps.map((s) => s.name)).toEqual(['trigger']);
  });

  it('refuses engine and forged tokens on the worker channel, and accepts a worker token', async () => {
    const refused: Record<string, string> = {
      'an engine token': signJwt(TEST_TOKEN_SECRET, engineClaims('00000000-0000-4000-8000-000000000000')),
      'an expired worker token': signJwt(
        TEST_TOKEN_SECRET,
        workerClaims('w', {
          iat: Math.floor(Date.now() / 1000) - 3_660,
          exp: Math.floor(Date.now() / 1000) - 3_600,
        }),
      ),
      'a worker token of another secret': signJwt('not-the-secret-not-the-secret-not!', workerClaims('w')),
      'an unsigned worker token': unsignedJwt(workerClaims('w'), 'none'),
      garbage: 'not-a-token',
    };
    for (const [name, token] of Object.entries(refused)) {
      const outcome = await RawSocketIo.connect(url, token);
      if (outcome.ok) sockets.push(outcome.socket);
      expect(outcome, name).toMatchObject({ ok: false, message: expect.stringMatching(/^UNAUTHORIZED/) });
    }
    const accepted = await RawSocketIo.connect(url, signJwt(TEST_TOKEN_SECRET, workerClaims('worker-e')));
    if (accepted.ok) sockets.push(accepted.socket);
    expect(accepted.ok).toBe(true);
  });
});
