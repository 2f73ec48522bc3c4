// Webhook idempotency keys against real processes (two apps, a worker, Postgres, Redis): one run
// per flow and key however many apps take its repeats at once, the same answer for each, 422 for
// a repeat with another body, and a new run once the key has expired.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import { RUN_ID_HEADER } from '../../../app/src/http/webhook-routes.ts';
import { codeFlow, type FaultStack, HOLD_FLOW, startFaultStack, waitForFinal } from './fault-harness.ts';

interface Answer {
  status: number;
  runId: string | null;
  body: string;
}

describe('idempotency keys on two apps', () => {
  let fault: FaultStack;
  let apps: string[];
  const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(fault.databaseUrl, text, params);

  /** A webhook with `key` as its Idempotency-Key (the draft's quoted form every other call). */
  async function send(
    app: string,
    flowId: string,
    key: string,
    body: unknown,
    options: { sync?: boolean; quoted?: boolean } = {},
  ): Promise<Answer> {
    const response = await fetch(`${app}/v1/webhooks/${flowId}${options.sync === false ? '' : '/sync'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': options.quoted === true ? `"${key}"` : key,
      },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      runId: response.headers.get(RUN_ID_HEADER),
      body: await response.text(),
    };
  }

  const runsOf = async (flowId: string) =>
    (await sql<{ id: string }>('SELECT id FROM runs WHERE flow_id = $1', [flowId])).map((row) => row.id);

  beforeAll(async () => {
    fault = await startFaultStack({
      apps: 2,
      workers: 1,
      flows: { hold: HOLD_FLOW, hold2: HOLD_FLOW, fails: codeFlow("throw new Error('no');") },
    });
    apps = fault.stack.appUrls;
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('answers 50 concurrent sync requests with one key across two apps from one run, identically', async () => {
    const key = randomUUID();
    const body = { url: fault.beacon.urlFor(key), holdMs: 1_500 };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        send(apps[i % 2] ?? '', 'hold', key, body, { quoted: i % 3 === 0 }),
      ),
    );
    const [first] = answers;
    expect(first?.status).toBe(200);
    expect(first?.runId).toMatch(/^[0-9a-f-]{36}$/);
    for (const answer of answers) expect(answer).toEqual(first);
    expect(await runsOf('hold')).toEqual([first?.runId]);
    expect(await fault.beacon.reached(key)).toBeDefined();

    // After the answer: the kept one, from either app.
    expect(await send(apps[1] ?? '', 'hold', key, body)).toEqual(first);
    // Another body, or the async route: 422 naming the key's run, and still one run.
    const other = await send(apps[0] ?? '', 'hold', key, { ...body, holdMs: 1 });
    expect(other.status).toBe(422);
    expect(JSON.parse(other.body)).toMatchObject({
      error: { code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining(String(first?.runId)) },
    });
    expect((await send(apps[1] ?? '', 'hold', key, body, { sync: false })).status).toBe(422);
    expect(await runsOf('hold')).toEqual([first?.runId]);

    // Expired (IDEMPOTENCY_TTL_HOURS past): the key is taken over by a new run.
    await sql("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1", [key]);
    const again = await send(apps[1] ?? '', 'hold', key, body);
    expect(again.status).toBe(200);
    expect(again.runId).not.toBe(first?.runId);
    expect((await runsOf('hold')).sort()).toEqual([first?.runId, again.runId].sort());
  });

  it('gives 30 concurrent async requests with one key the same 202 and run', async () => {
    const key = randomUUID();
    const body = { url: fault.beacon.urlFor(key), holdMs: 1 };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => send(apps[i % 2] ?? '', 'hold2', key, body, { sync: false })),
    );
    const [first] = answers;
    expect(first?.status).toBe(202);
    for (const answer of answers) expect(answer).toEqual(first);
    expect(JSON.parse(first?.body ?? '')).toEqual({ runId: first?.runId });
    expect(await runsOf('hold2')).toEqual([first?.runId]);
    expect((await waitForFinal(fault, String(first?.runId))).status).toBe('SUCCEEDED');
  });

  it("gives every repeat a failed run's own answer, during the run and after it", async () => {
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(apps[i % 2] ?? '', 'fails', key, { n: 1 })),
    );
    const [first] = answers;
    expect(first?.status).toBe(500);
    expect(JSON.parse(first?.body ?? '')).toMatchObject({
      error: { code: 'CODE_STEP_FAILED' },
      status: 'FAILED',
    });
    for (const answer of answers) expect(answer).toEqual(first);
    expect(await send(apps[0] ?? '', 'fails', key, { n: 1 })).toEqual(first);
    expect(await runsOf('fails')).toEqual([first?.runId]);
  });

  it('refuses a malformed key before any run', async () => {
    const response = await fetch(`${apps[0]}/v1/webhooks/fails/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': '' },
      body: '{}',
    });
    expect(response.status).toBe(400);
  });
});
