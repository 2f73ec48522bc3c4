// With the defaults (no RUN_ISOLATION set): a flow whose pieces all run in a V8 isolate runs in
// one; a flow whose piece imports a Node built-in (the faults piece) runs in a fresh engine
// process per run, which no earlier run touched; a piece the app's TRUSTED_PIECES lists runs in
// the warm engine's realm instead. Each run records which it got. Real app, worker and engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greetingFlow } from '../../../../test/flows.ts';
import { manage } from '../../../app/test/app-harness.ts';
import { goodPiece } from '../../../app/test/piece-archives.ts';
import {
  codeFlow,
  type FaultStack,
  faultsFlow,
  postWebhook,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const FLOWS = {
  remember: faultsFlow('remember', { value: '{{trigger.value}}' }),
  // A run's isolate has TextEncoder; the engine's own code-step context has none.
  where: codeFlow('return typeof TextEncoder;'),
};

interface Found {
  module: string[];
  global: string[];
  instance: string;
}

async function run(fault: FaultStack, flowId: string, body: Record<string, unknown> = {}) {
  const answer = await postWebhook(fault.url, flowId, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  // The isolation comes with the worker's result, after the response.
  const record = await waitForFinal(fault, answer.runId ?? '');
  return { body: answer.body, run: record };
}

describe('the default isolation', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ flows: FLOWS });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('registers the faults piece as needing Node', async () => {
    const piece = await manage(fault.url, 'GET', '/v1/pieces/faults', undefined, fault.stack.apiKey);
    expect(await piece.json()).toMatchObject({ versions: [{ isolate: { supported: false } }] });
  });

  it('runs a flow of isolatable pieces in an isolate of its own, and says so', async () => {
    const { body, run: record } = await run(fault, 'where');
    expect(body).toBe('function');
    expect(record).toMatchObject({ status: 'SUCCEEDED', isolation: 'isolate' });
  });

  it('runs a flow whose piece needs Node in a fresh engine per run, and says so', async () => {
    const runs = [];
    for (const value of ['secret-of-run-1', 'secret-of-run-2', 'secret-of-run-3']) {
      runs.push(await run(fault, 'remember', { value }));
    }
    for (const { body, run: record } of runs) {
      expect(record).toMatchObject({ status: 'SUCCEEDED', isolation: 'process' });
      expect(record.provisioning?.engine.jobsServed).toBe(1);
      const found = body as Found;
      expect({ module: found.module, global: found.global }).toEqual({ module: [], global: [] });
    }
    expect(new Set(runs.map(({ body }) => (body as Found).instance)).size).toBe(runs.length);
    // The isolate flow still runs in the worker's reused engine, untouched by them.
    const after = await run(fault, 'where');
    expect(after.run).toMatchObject({ status: 'SUCCEEDED', isolation: 'isolate' });
    expect(after.run.provisioning?.engine.jobsServed).toBeGreaterThan(1);
  });

  it('runs a flow the isolate refuses for its module form in a fresh process, its answer intact', async () => {
    // `export default createPiece(…)`: no Node import, so the registry calls it isolatable, but a
    // run's isolate takes only the `export { … }` list the piece build writes.
    const piece = { name: 'handmade', version: '1.0.0' };
    const published = await manage(fault.url, 'POST', '/v1/pieces', goodPiece(piece), fault.stack.apiKey);
    expect(published.status, await published.clone().text()).toBe(201);
    const greet = greetingFlow('handmade');
    const created = await manage(
      fault.url,
      'POST',
      '/v1/flows',
      { id: 'handmade', name: 'handmade', definition: greet, publish: true },
      fault.stack.apiKey,
    );
    expect(created.status, await created.clone().text()).toBe(201);
    const { body, run: record } = await run(fault, 'handmade', { who: 'ada' });
    expect(body).toEqual({ text: 'hello ada' });
    expect(record).toMatchObject({ status: 'SUCCEEDED', isolation: 'process', attempts: 1 });
    expect(record.steps.map((step) => step.name)).toEqual(['trigger', 'greet', 'respond']);
  });
});

describe('a piece the operator trusts (TRUSTED_PIECES)', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ flows: FLOWS, appEnv: { TRUSTED_PIECES: 'faults@0.1.0' } });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it("runs in the warm engine's realm, where one run sees what the last left, and says so", async () => {
    const first = await run(fault, 'remember', { value: 'left-by-run-1' });
    const second = await run(fault, 'remember', { value: 'left-by-run-2' });
    for (const { run: record } of [first, second]) {
      expect(record).toMatchObject({ status: 'SUCCEEDED', isolation: 'shared' });
    }
    expect((second.body as Found).module).toContain('left-by-run-1');
    expect(second.run.provisioning?.engine.pid).toBe(first.run.provisioning?.engine.pid);
    // Flows without such a piece still get an isolate.
    expect((await run(fault, 'where')).run).toMatchObject({ isolation: 'isolate' });
  });
});
