// The CLI's management commands against a real app (no worker): each command line as a user
// types it, its output and its exit code.
import { randomBytes } from 'node:crypto';
import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FlowboxApp } from '../../../apps/app/src/app.ts';
import { manage, startTestApp, TEST_API_KEY } from '../../../apps/app/test/app-harness.ts';
import { runCli } from '../src/program.ts';

describe('flowbox management commands (real app)', () => {
  let app: FlowboxApp;
  let url: string;

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
        cwd: process.cwd(),
        signal: new AbortController().signal,
      },
    );
    return { code, stdout, stderr };
  };

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ CONNECTIONS_KEY: randomBytes(32).toString('base64') }));
  });
  afterAll(async () => {
    await app?.close();
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
