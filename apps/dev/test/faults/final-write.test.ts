// The run's final write cannot fail on what a run holds, and a final write that fails anyway
// does not run an answered run again. A webhook body `{"text":"abcd😀xyz"}` whose code step takes
// `slice(0, 5)` splits the emoji: the step output holds a lone surrogate, which Postgres jsonb
// refuses; an upstream answer may hold one too. A JSON body may spell one as an escape. Against a
// real app, worker, engine and Postgres, with a loopback server the egress policy names that
// counts the calls the flow makes to it.
import { createServer, type Server } from 'node:http';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import { RUN_ID_HEADER } from '../../../app/src/http/webhook-routes.ts';
import { type FaultStack, postWebhook, startFaultStack, waitForFinal } from './fault-harness.ts';

/** In a step's output, this makes the test's trigger refuse the run's final write. */
const REFUSED_MARK = 'refuse-final-write';

/**
 * A code step cuts the body's `text` to five UTF-16 units, the `http` piece posts the cut to the
 * body's `url` and reads the answer as JSON, and the flow answers with the cut.
 */
const SPLIT: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'code',
      name: 'cut',
      code: 'return { text: inputs.text.slice(0, 5) };',
      input: { text: '{{trigger.body.text}}' },
    },
    {
      type: 'piece',
      name: 'call',
      piece: 'http',
      action: 'send_request',
      input: {
        method: 'POST',
        url: '{{trigger.body.url}}',
        headers: {},
        query: {},
        bodyType: 'json',
        body: '{{cut}}',
        timeoutMs: 10_000,
        responseType: 'json',
      },
    },
    {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{cut}}' },
    },
  ],
} as unknown as FlowDefinition;

/** Counts the calls by path, and answers each with JSON text holding a lone surrogate escape. */
async function startDownstream() {
  const calls = new Map<string, string[]>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      calls.set(path, [...(calls.get(path) ?? []), Buffer.concat(chunks).toString('utf8')]);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"upstream":"x\\ud800"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, calls, url: (path: string) => `http://127.0.0.1:${port}${path}`, port };
}

describe('the final write (real app, worker, engine and Postgres)', () => {
  let fault: FaultStack;
  let downstream: Awaited<ReturnType<typeof startDownstream>>;

  beforeAll(async () => {
    downstream = await startDownstream();
    fault = await startFaultStack({
      flows: { split: SPLIT },
      workerEnv: { EGRESS: `public,127.0.0.1:${downstream.port}` },
    });
    // A failure of the write itself, for a reason other than content: Postgres refuses the
    // statement that records a run whose steps carry the mark.
    await queryRows(
      fault.databaseUrl,
      `CREATE FUNCTION refuse_final_write() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'the test refuses this final write'; END $$`,
    );
    await queryRows(
      fault.databaseUrl,
      `CREATE TRIGGER refuse_final_write BEFORE UPDATE OF steps ON runs FOR EACH ROW
       WHEN (NEW.steps::text LIKE '%${REFUSED_MARK}%') EXECUTE FUNCTION refuse_final_write()`,
    );
  });
  afterAll(async () => {
    await fault?.close();
    downstream?.server.closeAllConnections();
    await new Promise<void>((resolve) => (downstream ? downstream.server.close(() => resolve()) : resolve()));
  });

  it('records a run whose step output and upstream answer hold lone surrogates, running it once', async () => {
    const answer = await postWebhook(fault.url, 'split', {
      text: 'abcd😀xyz',
      url: downstream.url('/split'),
    });
    // The caller gets the flow's text as it is; only the stored record replaces the surrogate.
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ text: 'abcd\uD83D' });
    const run = await waitForFinal(fault, answer.runId ?? '');
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    expect(run.attempts).toBe(1);
    expect(run.steps.map((step) => step.name)).toEqual(['trigger', 'cut', 'call', 'respond']);
    expect(run.steps.find((step) => step.name === 'cut')?.output).toEqual({ text: 'abcd\uFFFD' });
    expect(run.steps.find((step) => step.name === 'call')?.output).toMatchObject({
      status: 200,
      body: { upstream: 'x\uFFFD' },
    });
    // The http step sent the lone surrogate as JSON spells it, and was called once.
    expect(downstream.calls.get('/split')).toEqual(['{"text":"abcd\\ud83d"}']);
  });

  it('takes a JSON body with a lone surrogate escape, as U+FFFD for the flow and the record', async () => {
    const response = await fetch(`${fault.url}/v1/webhooks/split/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"text":"\\ud800 tail","url":"${downstream.url('/escape')}"}`,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: '\uFFFD tai' });
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinal(fault, runId);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    expect(run.steps.find((step) => step.name === 'cut')?.output).toEqual({ text: '\uFFFD tai' });
    const [row] = await queryRows<{ text: string }>(
      fault.databaseUrl,
      "SELECT trigger->'body'->>'text' AS text FROM runs WHERE id = $1",
      [runId],
    );
    expect(row?.text).toBe('\uFFFD tail');
    expect(downstream.calls.get('/escape')).toHaveLength(1);
  });

  it('ends a run whose final write Postgres refuses INTERNAL_ERROR naming why, without running it again', async () => {
    const answer = await postWebhook(fault.url, 'split', {
      text: REFUSED_MARK,
      url: downstream.url('/refused'),
    });
    // The flow's response reached the caller before the final write.
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ text: 'refus' });
    const run = await waitForFinal(fault, answer.runId ?? '');
    expect(run.status).toBe('INTERNAL_ERROR');
    expect(run.error).toMatchObject({ code: 'INTERNAL' });
    expect(run.error?.message).toMatch(
      /the run ended SUCCEEDED but its final state could not be written \(the test refuses this final write\); it is not run again/,
    );
    expect(run.attempts).toBe(1);
    expect(run.logKey).not.toBeNull();
    expect(downstream.calls.get('/refused')).toHaveLength(1);
    const logged = fault.lines.some(
      ({ line }) => line.json?.msg === "could not write a run's final state; ending it INTERNAL_ERROR",
    );
    expect(logged).toBe(true);
  });
});
