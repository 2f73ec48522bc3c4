// The CLI's management commands against a real app (no worker): each command line as a user
// types it, its output and its exit code.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@flowbox/node-kit';
import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FlowboxApp } from '../../../apps/app/src/app.ts';
import { createConnections } from '../../../apps/app/src/connections/connections.ts';
import { createPool } from '../../../apps/app/src/db/pool.ts';
import type { AppConfig } from '../../../apps/app/src/env.ts';
import { manage, startTestApp, TEST_API_KEY } from '../../../apps/app/test/app-harness.ts';
import { runCli } from '../src/program.ts';

describe('flowbox management commands (real app)', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;
  let work: string;
  let stdin = '';

  /** Runs one command line in-process; returns its exit code and output. */
  const flowbox = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      argv,
      { url, apiKey: TEST_API_KEY },
      {
        out: (text) => {
          stdout += text;
        },
        err: (text) => {
          stderr += text;
        },
        cwd: work,
        signal: new AbortController().signal,
        readStdin: async () => stdin,
      },
    );
    return { code, stdout, stderr };
  };

  beforeAll(async () => {
    ({ app, url, config } = await startTestApp({ CONNECTIONS_KEY: randomBytes(32).toString('base64') }));
    work = await mkdtemp(join(tmpdir(), 'flowbox-cli-commands-'));
  });
  afterAll(async () => {
    await app?.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('connections set, list and delete: values in from a file, stdin or --value, never out', async () => {
    await writeFile(join(work, 'slack.txt'), 'xoxb-from-a-file-0123\n');
    expect(await flowbox('connections', 'set', 'slack', '--from-file', 'slack.txt')).toEqual({
      code: 0,
      stdout: 'created connection slack\n',
      stderr: '',
    });
    stdin = '{"user":"ada","password":"pw-from-stdin-0123"}\n';
    expect((await flowbox('connections', 'set', 'db', '--from-file', '-', '--json')).stdout).toBe(
      'created connection db\n',
    );
    // Set again: the value is replaced.
    expect((await flowbox('connections', 'set', 'slack', '--value', 'xoxb-rotated-4567')).stdout).toBe(
      'updated connection slack\n',
    );
    const uses = {
      ...BENCHMARK_FLOW,
      steps: BENCHMARK_FLOW.steps.map((step) =>
        step.type === 'code' ? { ...step, input: { ...step.input, token: '{{connections.slack}}' } } : step,
      ),
    };
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'notifier',
      name: 'notifier',
      definition: uses,
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);

    const list = await flowbox('connections', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+UPDATED\s+USED BY$/m);
    expect(list.stdout).toMatch(/^db\s+\S+\s+-$/m);
    expect(list.stdout).toMatch(/^slack\s+\S+\s+notifier \(notifier-v1\)$/m);
    expect(list.stdout).not.toMatch(/xoxb|pw-from/);

    // What a run would be lent: the values as set, the file's and stdin's final newline dropped.
    const pool = createPool(config.DATABASE_URL, 1);
    const silent = createLogger({ name: 'test', level: 'silent' });
    try {
      expect(await createConnections(pool, config, silent).resolve(['slack', 'db'])).toEqual({
        slack: 'xoxb-rotated-4567',
        db: { user: 'ada', password: 'pw-from-stdin-0123' },
      });
    } finally {
      await pool.end();
    }
    const refused = await flowbox('connections', 'delete', 'slack');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error CONNECTION_IN_USE: delete connection slack: .*notifier-v1/);
    expect(await flowbox('connections', 'delete', 'db')).toEqual({
      code: 0,
      stdout: 'deleted connection db\n',
      stderr: '',
    });
    expect((await flowbox('connections', 'delete', 'db')).stderr).toMatch(/^error CONNECTION_NOT_FOUND: /);

    const both = await flowbox('connections', 'set', 'x', '--value', 'a', '--from-file', 'slack.txt');
    expect([both.code, both.stderr]).toEqual([
      1,
      'error INVALID_REQUEST: give the value with exactly one of --from-file <file> or --value <text>\n',
    ]);
    stdin = '[1, 2]';
    expect((await flowbox('connections', 'set', 'x', '--from-file', '-', '--json')).stderr).toBe(
      'error INVALID_REQUEST: --json: the value must be a JSON object\n',
    );
  });

  it('flow refused lists refused webhooks, headers without credentials on --headers', async () => {
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'gated',
      name: 'gated',
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(created.status).toBe(201);
    expect((await manage(url, 'PATCH', '/v1/flows/gated', { enabled: false })).status).toBe(200);
    const sent = await fetch(`${url}/v1/webhooks/gated`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer abc-secret', 'x-event': 'ping' },
      body: '{}',
    });
    expect(sent.status).toBe(404);

    const listed = await vi.waitFor(
      async () => {
        const result = await flowbox('flow', 'refused', 'gated');
        if (!result.stdout.includes('FLOW_NOT_FOUND')) throw new Error(result.stdout);
        return result;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^RECEIVED\s+ANSWER\s+METHOD\s+FROM\s+REASON$/m);
    expect(listed.stdout).toMatch(
      /404 FLOW_NOT_FOUND\s+POST\s+\S+\s+flow gated does not exist or is not enabled/,
    );
    const withHeaders = await flowbox('flow', 'refused', 'gated', '--headers');
    expect(withHeaders.stdout).toContain('    x-event: ping');
    expect(withHeaders.stdout).not.toContain('abc-secret');
    expect(withHeaders.stdout).not.toContain('authorization');

    expect(await flowbox('flow', 'refused', 'no-such-flow')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error FLOW_NOT_FOUND: list refused deliveries of flow no-such-flow: flow no-such-flow not found\n',
    });
  });
});
