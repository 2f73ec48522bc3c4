// Step tests refused before any worker is asked (unknown flow, version or step; a step that is not
// a leaf), and the 504 when no worker answers: an app with no worker, on the real stores.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../packages/local-services/src/index.ts';
import type { FlowboxApp } from '../src/app.ts';
import type { AppConfig } from '../src/env.ts';
import { manage, startTestApp } from './app-harness.ts';

const FLOW: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'code', name: 'double', code: 'return inputs.n * 2;', input: { n: '{{trigger.body.n}}' } },
    {
      type: 'loop',
      name: 'each',
      items: '{{trigger.body.items}}',
      concurrency: 1,
      steps: [
        { type: 'code', name: 'square', code: 'return inputs.x * inputs.x;', input: { x: '{{each.item}}' } },
      ],
    },
  ],
} as unknown as FlowDefinition;

interface ErrorBody {
  error: { code: string; message: string };
}

describe('step tests refused', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;
  const test = (flowId: string, step: string, body: unknown = { data: {} }) =>
    manage(url, 'POST', `/v1/flows/${flowId}/steps/${step}/test`, body);
  const refusal = async (response: Response, status: number, code: string): Promise<string> => {
    const body = (await response.json()) as ErrorBody;
    expect({ status: response.status, code: body.error.code }).toEqual({ status, code });
    return body.error.message;
  };

  beforeAll(async () => {
    // No worker connects: a test that gets past its checks waits its WEBHOOK_TIMEOUT_SECONDS.
    ({ app, url, config } = await startTestApp({
      WEBHOOK_TIMEOUT_SECONDS: '1',
      SEED_BENCHMARK_FLOW: 'false',
    }));
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'maths',
      name: 'maths',
      definition: FLOW,
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 404 for an unknown flow or version, naming it', async () => {
    expect(await refusal(await test('nope', 'double'), 404, 'FLOW_NOT_FOUND')).toContain('nope');
    const message = await refusal(
      await test('maths', 'double', { data: {}, version: 'other-v9' }),
      404,
      'FLOW_VERSION_NOT_FOUND',
    );
    expect(message).toContain('other-v9');
  });

  it('answers 404 for an unknown step, naming the steps the flow has', async () => {
    const message = await refusal(await test('maths', 'tripple'), 404, 'STEP_NOT_FOUND');
    expect(message).toContain('tripple');
    expect(message).toContain('double, each, square');
  });

  it('answers 400 for a loop or the trigger: only piece and code steps run alone', async () => {
    expect(await refusal(await test('maths', 'each'), 400, 'STEP_NOT_TESTABLE')).toContain('loop');
    expect(await refusal(await test('maths', 'trigger'), 400, 'STEP_NOT_TESTABLE')).toContain('trigger');
  });

  it('answers 400 for data that is not an object', async () => {
    await refusal(await test('maths', 'double', { data: [1, 2] }), 400, 'INVALID_REQUEST');
  });

  it('answers 504 when no worker answers, and leaves no job and no run behind', async () => {
    const response = await test('maths', 'double', { data: { trigger: { body: { n: 2 } } } });
    expect(await refusal(response, 504, 'STEP_TEST_TIMEOUT')).toContain('WEBHOOK_TIMEOUT_SECONDS');
    const runs = await queryRows<{ count: string }>(config.DATABASE_URL, 'SELECT count(*) FROM runs');
    expect(runs[0]?.count).toBe('0');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/flowbox_queue_jobs\{state="waiting"\} 0/);
  });
});
