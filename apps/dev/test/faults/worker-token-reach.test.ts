// The worker's token out of reach of piece code, in every execution mode and with the defaults
// (where this piece, which imports node:fs, runs in a fresh engine process): a hostile piece reads
// the environment, command line and memory of its parent, of the worker by its host pid and of
// every process /proc shows (the app, with TOKEN_SECRET, included). Each stack is real (app,
// worker and engine processes); the control, ENGINE_PID_NAMESPACE=false, shows the same piece
// does find the token when the engine is forked beside the worker.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultStack,
  faultsFlow,
  postWebhook,
  report,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const STEAL = faultsFlow('attempt', { what: 'steal-worker-token', target: '{{trigger.target}}' });

/** The value of `name` in a process's environment, read from the host. */
function environValue(pid: number, name: string): string | undefined {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return entries.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** The worker's token as the worker has it: from its environment or its WORKER_TOKEN_FILE. */
function workerTokenOf(workerPid: number): string {
  const token = environValue(workerPid, 'WORKER_TOKEN');
  if (token !== undefined) return token;
  const file = environValue(workerPid, 'WORKER_TOKEN_FILE');
  if (file === undefined)
    throw new Error(`worker ${workerPid} has neither WORKER_TOKEN nor WORKER_TOKEN_FILE`);
  return readFileSync(file, 'utf8').trim();
}

interface Mode {
  name: string;
  workerEnv: Record<string, string>;
  /** How the run was kept apart: the piece imports node:fs, so an isolate worker gives it a fresh process. */
  isolation: 'shared' | 'process';
}

const MODES: Mode[] = [
  // The defaults: RUN_ISOLATION=isolate, and this piece needs Node, so a fresh engine process.
  { name: 'defaults', workerEnv: {}, isolation: 'process' },
  { name: 'shared', workerEnv: { RUN_ISOLATION: 'shared' }, isolation: 'shared' },
  { name: 'process (cold)', workerEnv: { RUN_ISOLATION: 'process' }, isolation: 'process' },
  {
    name: 'SANDBOXED',
    workerEnv: { EXECUTION_MODE: 'SANDBOXED', RUN_ISOLATION: 'shared' },
    isolation: 'shared',
  },
  { name: 'SANDBOXED, defaults', workerEnv: { EXECUTION_MODE: 'SANDBOXED' }, isolation: 'process' },
];

describe.each(MODES)('a piece hunting the worker token ($name)', ({ name, workerEnv, isolation }) => {
  let fault: FaultStack;
  let workerPid: number;

  beforeAll(async () => {
    fault = await startFaultStack({ flows: { steal: STEAL }, workerEnv });
    workerPid = fault.stack.workers[0]?.pid ?? -1;
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('finds neither the worker token nor the app secret anywhere it can read', async () => {
    const token = workerTokenOf(workerPid);
    const appPid = fault.stack.apps[0]?.pid ?? -1;
    const tokenSecret = environValue(appPid, 'TOKEN_SECRET') ?? '';
    expect(token.length).toBeGreaterThan(20);
    expect(tokenSecret.length).toBeGreaterThan(20);

    const tokenFile = environValue(workerPid, 'WORKER_TOKEN_FILE') ?? '';
    const answer = await postWebhook(
      fault.url,
      'steal',
      { target: `${workerPid} ${tokenFile}` },
      { timeoutMs: 120_000 },
    );
    const run = await waitForFinal(fault, answer.runId ?? '', 120_000);
    const seen = `${JSON.stringify(answer.body)} ${JSON.stringify(run)}`;
    report(`token hunt, ${name}`, { status: run.status, error: (run.error?.message ?? '').slice(0, 600) });
    expect(run.status).toBe('FAILED');
    expect(run.isolation).toBe(isolation);
    // The piece's own report of every place it tried.
    expect(run.error?.message).toMatch(/^found no secret; tried /);
    expect(seen).not.toContain(token);
    expect(seen).not.toContain(tokenSecret);
    // It did try the worker's files and found its pid not there: the engine has its own /proc.
    expect(run.error?.message).toContain(`"/proc/${workerPid}/environ":"ENOENT"`);
    expect(run.error?.message).toContain(`"/proc/${workerPid}/mem":"ENOENT"`);
    // The token file is there, and the engine cannot read it (SANDBOXED: not there at all).
    const sandboxed = workerEnv.EXECUTION_MODE === 'SANDBOXED';
    expect(run.error?.message).toContain(`"${tokenFile}":"${sandboxed ? 'ENOENT' : 'EACCES'}"`);
  });
});

describe('the control: engines forked beside the worker (ENGINE_PID_NAMESPACE=false)', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      flows: { steal: STEAL },
      workerEnv: { RUN_ISOLATION: 'shared', ENGINE_PID_NAMESPACE: 'false' },
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it("lets the same piece read the worker's token from its memory (the token is in no environment)", async () => {
    const workerPid = fault.stack.workers[0]?.pid ?? -1;
    const token = workerTokenOf(workerPid);
    // pnpm dev hands it over in a file: that alone does not keep it from a piece.
    expect(environValue(workerPid, 'WORKER_TOKEN')).toBeUndefined();
    const answer = await postWebhook(
      fault.url,
      'steal',
      { target: String(workerPid) },
      { timeoutMs: 120_000 },
    );
    const run = await waitForFinal(fault, answer.runId ?? '', 120_000);
    expect(run.status).toBe('SUCCEEDED');
    const found = (answer.body as { found?: Array<{ where: string; text: string }> }).found ?? [];
    report('token hunt, control', { found: found.map((f) => f.where) });
    expect(found.some((f) => f.where === `/proc/${workerPid}/mem` && f.text.includes(token))).toBe(true);
    // And the app's signing secret, from the app's environment.
    const appPid = fault.stack.apps[0]?.pid ?? -1;
    const tokenSecret = environValue(appPid, 'TOKEN_SECRET') ?? '';
    expect(found.some((f) => f.where === `/proc/${appPid}/environ` && f.text.includes(tokenSecret))).toBe(
      true,
    );
  });
});
