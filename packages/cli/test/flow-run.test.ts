import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRun, manage, waitForFinalRun } from '../../../apps/app/test/app-harness.ts';
import { type CliStack, flowbox, startCliStack } from './cli-harness.ts';

/** Answers with what the trigger gave it. */
const echo = (trigger: FlowDefinition['trigger']): FlowDefinition => ({
  trigger,
  steps: [
    { type: 'code', name: 'seen', code: 'return inputs;', input: { trigger: '{{trigger}}' } },
    {
      type: 'piece',
      name: 'answer',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 201, body: '{{seen}}' },
    },
  ],
});
const WEBHOOK = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} } as const;
/** Yearly: no tick comes during the test; the flow runs only by hand. */
const YEARLY = {
  name: 'trigger',
  piece: 'schedule',
  trigger: 'cron',
  input: { expression: '0 0 1 1 *', timezone: 'Europe/Berlin' },
} as const;

// Manual runs through the API and `flowbox flow run`, on a real app and worker.
describe('manual runs', () => {
  let cli: CliStack;
  let work: string;
  const api = (method: string, path: string, body?: unknown) =>
    manage(cli.url, method, path, body, cli.apiKey);

  beforeAll(async () => {
    cli = await startCliStack();
    work = await mkdtemp(join(tmpdir(), 'flowbox-flow-run-'));
    for (const [id, trigger] of [
      ['by-webhook', WEBHOOK],
      ['by-schedule', YEARLY],
    ] as const) {
      const created = await api('POST', '/v1/flows', {
        id,
        name: id,
        definition: echo(trigger),
        publish: true,
      });
      expect(created.status).toBe(201);
    }
  }, 120_000);
  afterAll(async () => {
    await cli?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('runs a webhook flow and a schedule flow by hand, sync and async, recording `manual`', async () => {
    const sync = await api('POST', '/v1/flows/by-webhook/runs/sync', { who: 'ada' });
    expect(sync.status).toBe(201);
    expect(await sync.json()).toMatchObject({ trigger: { who: 'ada' } });
    const syncRunId = sync.headers.get('x-flowbox-run-id') ?? '';
    // Answered by its response step: the run ends just after.
    const syncRun = await waitForFinalRun(() => getRun(cli.url, syncRunId, cli.apiKey), syncRunId);
    expect(syncRun).toMatchObject({ status: 'SUCCEEDED', source: 'manual', sync: true });

    const accepted = await api('POST', '/v1/flows/by-schedule/runs', {
      scheduledAt: '2027-01-01T00:00:00.000Z',
    });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    const run = await waitForFinalRun(() => getRun(cli.url, runId, cli.apiKey), runId);
    expect(run).toMatchObject({ status: 'SUCCEEDED', source: 'manual', sync: false });
    // The schedule trigger's output: the tick the payload named.
    expect(run.steps[0]?.output).toMatchObject({ scheduledAt: '2027-01-01T00:00:00.000Z' });

    // Its webhook is closed; the run list shows what started each run.
    expect((await fetch(`${cli.url}/v1/webhooks/by-schedule`, { method: 'POST' })).status).toBe(409);
    const list = (await (await api('GET', '/v1/runs?limit=10')).json()) as {
      runs: Array<{ source: string }>;
    };
    expect(list.runs.map((r) => r.source)).toEqual(['manual', 'manual']);
  });

  it('refuses a payload that is not an object, and an unknown flow, starting nothing', async () => {
    const array = await api('POST', '/v1/flows/by-webhook/runs', [1, 2]);
    expect(array.status).toBe(400);
    expect(await array.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const unknown = await api('POST', '/v1/flows/no-such-flow/runs', {});
    expect(unknown.status).toBe(404);
    const list = (await (await api('GET', '/v1/runs?flowId=by-webhook')).json()) as { runs: unknown[] };
    expect(list.runs).toHaveLength(1);
  });

  it('flowbox flow run: --data as JSON or @file, --sync prints the answer', async () => {
    await writeFile(join(work, 'payload.json'), JSON.stringify({ who: 'grace' }));
    const sync = await flowbox(cli, ['flow', 'run', 'by-webhook', '--data', '@payload.json', '--sync'], work);
    expect(sync.stderr).toBe('');
    expect(sync.stdout).toMatch(/^run [0-9a-f-]{36} answered 201\n/);
    expect(sync.stdout).toContain('"who":"grace"');

    const started = await flowbox(cli, ['flow', 'run', 'by-schedule', '--data', '{"x":1}'], work);
    expect(started.code, started.stderr).toBe(0);
    const runId = /started run ([0-9a-f-]{36})/.exec(started.stdout)?.[1] ?? '';
    expect((await waitForFinalRun(() => getRun(cli.url, runId, cli.apiKey), runId)).status).toBe('SUCCEEDED');

    const bad = await flowbox(cli, ['flow', 'run', 'by-webhook', '--data', '[1]'], work);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error INVALID_DATA: --data: the payload is a JSON object/);
    const missing = await flowbox(cli, ['flow', 'run', 'no-such-flow', '--sync'], work);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error FLOW_NOT_FOUND: /);
  });
});
