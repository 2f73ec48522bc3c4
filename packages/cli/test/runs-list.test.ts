import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRun, manage, postJson } from '../../../apps/app/test/app-harness.ts';
import { waitUntil } from '../../../test/wait.ts';
import { type CliStack, flowbox, startCliStack } from './cli-harness.ts';

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} } as const;
/** A code step, then a delay far longer than the test: its runs stay PAUSED. */
const LATER: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'first', code: 'return { ok: true };', input: {} },
    { type: 'delay', name: 'later', for: '1h' },
  ],
} as unknown as FlowDefinition;
/** Waits for a request to its wait URL, with a timeout. */
const HOOK: FlowDefinition = {
  trigger: TRIGGER,
  steps: [{ type: 'wait', name: 'hook', kind: 'request', timeout: '2h' }],
} as unknown as FlowDefinition;
const RUN_ID = /[0-9a-f-]{36}/g;

// `flowbox runs list` filters and `runs show` of a paused run, on a real app and worker.
describe('flowbox runs list and show, with paused runs', () => {
  let cli: CliStack;
  let work: string;
  const runIds: Record<string, string> = {};

  async function startPaused(flowId: string, body: unknown): Promise<string> {
    const response = await postJson(`${cli.url}/v1/webhooks/${flowId}`, body);
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    await waitUntil(
      async () => (await getRun(cli.url, runId, cli.apiKey)).status === 'PAUSED',
      60_000,
      `run ${runId} of ${flowId} PAUSED`,
    );
    return runId;
  }
  const listed = (stdout: string) => stdout.match(RUN_ID) ?? [];

  beforeAll(async () => {
    cli = await startCliStack();
    work = await mkdtemp(join(tmpdir(), 'flowbox-runs-list-'));
    for (const [id, definition] of [
      ['later', LATER],
      ['hook', HOOK],
    ] as const) {
      const created = await manage(
        cli.url,
        'POST',
        '/v1/flows',
        { id, name: id, definition, publish: true },
        cli.apiKey,
      );
      expect(created.status, await created.clone().text()).toBe(201);
    }
    runIds.ada = await startPaused('later', { customer: 'Ada Lovelace' });
    runIds.grace = await startPaused('later', { customer: 'Grace Hopper' });
    runIds.hook = await startPaused('hook', { customer: 'Edsger' });
  }, 120_000);
  afterAll(async () => {
    await cli?.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('--status PAUSED lists the paused runs with their status', async () => {
    const paused = await flowbox(cli, ['runs', 'list', '--status', 'PAUSED'], work);
    expect(paused.code, paused.stderr).toBe(0);
    expect(new Set(listed(paused.stdout))).toEqual(new Set([runIds.ada, runIds.grace, runIds.hook]));
    expect(paused.stdout).toMatch(new RegExp(`${runIds.ada}\\s+later\\s+PAUSED\\s+async`));
    const none = await flowbox(cli, ['runs', 'list', '--status', 'SUCCEEDED'], work);
    expect(none.stdout).toBe('no runs\n');
  });

  it('--payload finds runs by text in their request body, in any case', async () => {
    const found = await flowbox(cli, ['runs', 'list', '--payload', 'lovelace'], work);
    expect(found.code, found.stderr).toBe(0);
    expect(listed(found.stdout)).toEqual([runIds.ada]);
    const withFlow = await flowbox(cli, ['runs', 'list', '--flow', 'hook', '--payload', 'ada'], work);
    expect(withFlow.stdout).toBe('no runs\n');
  });

  it('--since and --until bound the creation time; a time that is not ISO is refused', async () => {
    const grace = await getRun(cli.url, runIds.grace ?? '', cli.apiKey);
    const since = await flowbox(cli, ['runs', 'list', '--since', grace.createdAt], work);
    expect(since.code, since.stderr).toBe(0);
    expect(new Set(listed(since.stdout))).toEqual(new Set([runIds.grace, runIds.hook]));
    const until = await flowbox(cli, ['runs', 'list', '--until', grace.createdAt], work);
    expect(listed(until.stdout)).toEqual([runIds.ada]);
    const future = await flowbox(cli, ['runs', 'list', '--since', '2999-01-01'], work);
    expect(future.stdout).toBe('no runs\n');

    const bad = await flowbox(cli, ['runs', 'list', '--since', 'yesterday'], work);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--since <time>.*must be an ISO date or date-time/);
  });

  it('runs show of a paused run prints its waits: path, kind, when it resumes or times out, answered', async () => {
    const later = await flowbox(cli, ['runs', 'show', runIds.ada ?? ''], work);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toMatch(/status\s+PAUSED/);
    expect(later.stdout).toMatch(/\n\s+later\s+delay\s+waiting\s+resumes \d{4}-\d{2}-\d{2}T/);

    const hook = await flowbox(cli, ['runs', 'show', runIds.hook ?? ''], work);
    expect(hook.stdout).toMatch(/\n\s+hook\s+request\s+waiting\s+times out \d{4}-\d{2}-\d{2}T/);
  });
});
