// Testing one step on a real stack (two apps, a worker, its engine, Postgres, Redis, S3): the step
// runs on the worker over the sample data and its answer comes back to the app holding the
// caller, whichever app the worker polls; no run is recorded; a connection's value reaches the
// service the step calls and is shown redacted; a failing code step answers its line and column.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlowDefinition, StepTestAnswer } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../packages/local-services/src/index.ts';
import { manage } from '../../app/test/app-harness.ts';
import { type FaultStack, startFaultStack } from './faults/fault-harness.ts';

const SECRET = 'sk-test-9b1f3e7a5c2d8f4e6a0b';

/** Answers with the JSON body it got, and keeps it. */
async function startEcho(): Promise<{ port: number; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ got: JSON.parse(body || 'null') }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const shop = (port: number): FlowDefinition =>
  ({
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
    steps: [
      {
        type: 'code',
        name: 'total',
        code: "console.log('summing', inputs.items.length);\nreturn { total: inputs.items.reduce((sum, item) => sum + item.price, 0) };",
        input: { items: '{{trigger.body.items}}' },
      },
      {
        type: 'code',
        name: 'breaks',
        code: 'const order = inputs.order;\nreturn order.lines.length;',
        input: { order: '{{trigger.body.order}}' },
      },
      {
        type: 'piece',
        name: 'notify',
        piece: 'http',
        action: 'send_request',
        input: {
          method: 'POST',
          url: `http://127.0.0.1:${port}/notify`,
          bodyType: 'json',
          body: { key: '{{connections.shop_api}}', total: '{{total.total}}' },
          responseType: 'json',
        },
      },
      {
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.items}}',
        concurrency: 1,
        steps: [
          {
            type: 'code',
            name: 'line',
            code: 'return { n: inputs.index + 1, doubled: inputs.price * 2 };',
            input: { price: '{{each.item.price}}', index: '{{each.index}}' },
          },
        ],
      },
    ],
  }) as unknown as FlowDefinition;

describe('testing one step on a real stack', () => {
  let fault: FaultStack;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  const api = (base: string, method: string, path: string, body?: unknown) =>
    manage(base, method, path, body, fault.stack.apiKey);
  const testStep = async (base: string, step: string, body: unknown): Promise<StepTestAnswer> => {
    const response = await api(base, 'POST', `/v1/flows/shop/steps/${step}/test`, body);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as StepTestAnswer;
  };
  const runCount = async () =>
    (await queryRows<{ count: string }>(fault.databaseUrl, 'SELECT count(*) FROM runs'))[0]?.count;

  beforeAll(async () => {
    echo = await startEcho();
    fault = await startFaultStack({ apps: 2, workers: 1, workerEnv: { EGRESS: `127.0.0.1:${echo.port}` } });
    const url = fault.url;
    expect((await api(url, 'POST', '/v1/connections', { name: 'shop_api', value: SECRET })).status).toBe(201);
    const created = await api(url, 'POST', '/v1/flows', {
      id: 'shop',
      name: 'shop',
      definition: shop(echo.port),
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
  });
  afterAll(async () => {
    await fault?.close();
    await echo?.close();
  });

  it('runs a code step over the sample data on either app and answers its output; no run is recorded', async () => {
    const data = { trigger: { body: { items: [{ price: 3 }, { price: 4 }] } } };
    for (const base of fault.stack.appUrls) {
      const answer = await testStep(base, 'total', { data });
      expect(answer).toMatchObject({
        status: 'SUCCEEDED',
        output: { total: 7 },
        logs: [{ level: 'log', message: 'summing 2' }],
      });
      expect(answer.durationMs).toBeGreaterThan(0);
    }
    expect(await runCount()).toBe('0');
  });

  it("sends a piece step's connection to the service and answers it redacted", async () => {
    const answer = await testStep(fault.url, 'notify', { data: { total: { total: 12 } } });
    expect(answer.status).toBe('SUCCEEDED');
    expect(echo.bodies.at(-1)).toBe(JSON.stringify({ key: SECRET, total: 12 }));
    const shown = JSON.stringify(answer);
    expect(shown).not.toContain(SECRET);
    expect(answer.output).toMatchObject({
      status: 200,
      body: { got: { key: '[connection:shop_api]', total: 12 } },
    });
    expect(await runCount()).toBe('0');
  });

  it('answers FAILED with a code step error at its line and column', async () => {
    const answer = await testStep(fault.url, 'breaks', { data: { trigger: { body: { order: {} } } } });
    expect(answer.status).toBe('FAILED');
    expect(answer.output).toBeUndefined();
    expect(answer.error).toMatchObject({ code: 'CODE_STEP_FAILED', step: 'breaks' });
    expect(answer.error?.message).toMatch(/TypeError: .*length.*\(line 2, column \d+\)/);
  });

  it("runs a loop's body step with the item and index given under the loop's name", async () => {
    const answer = await testStep(fault.url, 'line', { data: { each: { item: { price: 5 }, index: 2 } } });
    expect(answer).toMatchObject({ status: 'SUCCEEDED', output: { n: 3, doubled: 10 } });
  });

  it('answers 404 naming the steps for a step the flow does not have', async () => {
    const response = await api(fault.url, 'POST', '/v1/flows/shop/steps/totl/test', { data: {} });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('STEP_NOT_FOUND');
    expect(body.error.message).toContain('total, breaks, notify, each, line');
  });

  it('tests the latest version before it is published', async () => {
    const draft = shop(echo.port) as unknown as { steps: Array<{ name: string; code?: string }> };
    const total = draft.steps.find((step) => step.name === 'total');
    if (total !== undefined) total.code = 'return { total: inputs.items.length };';
    const added = await api(fault.url, 'POST', '/v1/flows/shop/versions', { definition: draft });
    expect(added.status, await added.clone().text()).toBe(201);
    const data = { trigger: { body: { items: [{ price: 3 }, { price: 4 }] } } };
    expect(await testStep(fault.url, 'total', { data, version: 'latest' })).toMatchObject({
      output: { total: 2 },
    });
    // The published version is still the default.
    expect(await testStep(fault.url, 'total', { data })).toMatchObject({ output: { total: 7 } });
  });
});
