import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage } from '../../../apps/app/test/app-harness.ts';
import { type CliStack, flowbox, startCliStack } from './cli-harness.ts';

const FLOW = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'code',
      name: 'greet',
      code: "console.log('greeting', inputs.who);\nreturn { text: 'hi ' + inputs.who };",
      input: { who: '{{trigger.body.who}}' },
    },
    { type: 'code', name: 'breaks', code: 'return inputs.missing.deeper;', input: {} },
  ],
} as unknown as FlowDefinition;

// `flowbox flow test-step` on a real app and worker.
describe('flowbox flow test-step', () => {
  let cli: CliStack;
  let work: string;

  beforeAll(async () => {
    cli = await startCliStack();
    work = await mkdtemp(join(tmpdir(), 'flowbox-test-step-'));
    const created = await manage(
      cli.url,
      'POST',
      '/v1/flows',
      { id: 'greeter', name: 'greeter', definition: FLOW, publish: true },
      cli.apiKey,
    );
    expect(created.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await cli?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('prints the output of a step run over --data (JSON or @file), its console lines on stderr', async () => {
    const inline = await flowbox(
      cli,
      ['flow', 'test-step', 'greeter', 'greet', '--data', '{"trigger":{"body":{"who":"ada"}}}'],
      work,
    );
    expect(inline.code, inline.stderr).toBe(0);
    expect(JSON.parse(inline.stdout)).toEqual({ text: 'hi ada' });
    expect(inline.stderr).toBe('log: greeting ada\n');

    await writeFile(join(work, 'sample.json'), JSON.stringify({ trigger: { body: { who: 'grace' } } }));
    const fromFile = await flowbox(
      cli,
      ['flow', 'test-step', 'greeter', 'greet', '--data', '@sample.json'],
      work,
    );
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual({ text: 'hi grace' });
  });

  it("exits 1 with the step's error when it fails, and with the API's for an unknown step", async () => {
    const failed = await flowbox(cli, ['flow', 'test-step', 'greeter', 'breaks'], work);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(
      /^error CODE_STEP_FAILED: step breaks failed: TypeError: .*\(line 1, column \d+\)/,
    );

    const unknown = await flowbox(cli, ['flow', 'test-step', 'greeter', 'nope', '--data', '{}'], work);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error STEP_NOT_FOUND: .*its steps: greet, breaks/);
  });
});
