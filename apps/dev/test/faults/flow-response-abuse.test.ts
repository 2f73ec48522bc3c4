// What a flow's response may put on the wire. A response step
// with an interim status (100, 101, 103) or a header that cannot be sent (CR/LF in its value, a
// bad name) fails its run INVALID_RESPONSE, and the caller gets the usual 500 with the run id
// instead of `101 Switching Protocols` or `500 OK {}`; headers that act on the app's origin
// (set-cookie, CORS, security headers, reporting and alt-svc) are refused unless
// WEBHOOK_RESPONSE_ALLOWED_HEADERS names them; every answer is nosniff, and one that is not JSON
// is sandboxed; an object body under a non-JSON content type goes as its JSON text. And the run duration
// histogram holds the runs. Against a real app, worker and engine.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../../test/prometheus.ts';
import { manage } from '../../../app/test/app-harness.ts';
import { type FaultStack, postWebhook, startFaultStack, waitForFinal, waitUntil } from './fault-harness.ts';

const METRICS_TOKEN = 'metrics-token-for-the-response-test';

/**
 * Answers with the status, headers and body the webhook body names (`headers` and `body` are
 * request parts on the trigger, so the body's own fields of those names are read under body).
 */
const ECHO: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: {
        status: '{{trigger.status}}',
        headers: '{{trigger.body.headers}}',
        body: '{{trigger.body.body}}',
      },
    },
  ],
} as unknown as FlowDefinition;

interface FailedAnswer {
  runId: string;
  status: string;
  step?: string;
  error: { code: string; message: string };
}

describe('flow responses that cannot or may not be sent (real app, worker and engine)', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      flows: { echo: ECHO },
      appEnv: { WEBHOOK_RESPONSE_ALLOWED_HEADERS: 'access-control-allow-origin', METRICS_TOKEN },
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  const echo = (status: number | string, headers: Record<string, string>, body: unknown = { ok: true }) =>
    postWebhook(fault.url, 'echo', { status, headers, body });

  /** The caller got the usual 500 naming the run, and the run is FAILED with the same error. */
  async function expectInvalidResponse(
    answer: Awaited<ReturnType<typeof echo>>,
    message: RegExp,
  ): Promise<void> {
    expect(answer.status).toBe(500);
    const body = answer.body as FailedAnswer;
    expect(body).toMatchObject({ status: 'FAILED', step: 'respond', error: { code: 'INVALID_RESPONSE' } });
    expect(body.error.message).toMatch(message);
    expect(answer.runId).not.toBeNull();
    expect(body.runId).toBe(answer.runId);
    const run = await waitForFinal(fault, answer.runId ?? '');
    expect(run).toMatchObject({ status: 'FAILED', error: { code: 'INVALID_RESPONSE', step: 'respond' } });
  }

  it('fails a templated interim status (100, 101, 103) INVALID_RESPONSE: the caller gets 500 with the run id', async () => {
    for (const status of [100, 101, 103, '101']) {
      await expectInvalidResponse(
        await echo(status, {}),
        /status 10\d is not a final HTTP status \(200–599\)/,
      );
    }
    // The connection (fetch keeps it alive) still answers the next call with its own answer.
    const next = await echo(201, {}, { next: true });
    expect(next).toMatchObject({ status: 201, body: { next: true } });
  });

  it('fails a header with CR/LF in its value or an invalid name INVALID_RESPONSE, naming the header', async () => {
    await expectInvalidResponse(
      await echo(200, { 'x-split': 'a\r\nset-cookie: stolen=1' }),
      /header "x-split" has a value with a character HTTP cannot carry/,
    );
    // (Not NUL: Postgres cannot store it in a run's steps, a limit of its own.)
    await expectInvalidResponse(await echo(200, { 'x-bell': 'a\u0007' }), /header "x-bell"/);
    await expectInvalidResponse(
      await echo(200, { 'bad name': 'v' }),
      /header name "bad name" is not a valid HTTP header name/,
    );
  });

  it('refuses set-cookie, CORS and security headers unless allowed, and passes the allowed one', async () => {
    for (const [name, value] of [
      ['set-cookie', 'session=x; Path=/inspector'],
      ['Access-Control-Allow-Credentials', 'true'],
      ['content-security-policy', "default-src *; script-src 'unsafe-inline'"],
      ['strict-transport-security', 'max-age=0'],
      ['x-frame-options', 'ALLOWALL'],
      ['x-content-type-options', 'sniff'],
      ['nel', '{"report_to":"r","max_age":86400}'],
      ['report-to', '{"group":"r","max_age":86400,"endpoints":[{"url":"https://collector.example"}]}'],
      ['Reporting-Endpoints', 'r="https://collector.example"'],
      ['alt-svc', 'h2="collector.example:443"; ma=86400'],
    ] as const) {
      await expectInvalidResponse(
        await echo(200, { [name]: value }),
        new RegExp(`header "${name}" acts on the app's origin .*WEBHOOK_RESPONSE_ALLOWED_HEADERS`),
      );
    }
    const response = await fetch(`${fault.url}/v1/webhooks/echo/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 200, headers: { 'access-control-allow-origin': '*' }, body: { ok: 1 } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({ ok: 1 });
  });

  it('serves a flow answer with nosniff, and sandboxes one that is not JSON', async () => {
    const html = await fetch(`${fault.url}/v1/webhooks/echo/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: '<script>alert(document.cookie)</script>',
      }),
    });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-security-policy')).toBe('sandbox');
    expect(await html.text()).toBe('<script>alert(document.cookie)</script>');

    const json = await fetch(`${fault.url}/v1/webhooks/echo/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 200, headers: {}, body: { a: 1 } }),
    });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.headers.get('x-content-type-options')).toBe('nosniff');
    expect(json.headers.get('content-security-policy')).toBeNull();
  });

  it('sends an object body under a declared non-JSON content type as its JSON text, keeping the type', async () => {
    for (const [type, body, text] of [
      ['text/html', { a: 1, b: ['x'] }, '{"a":1,"b":["x"]}'],
      ['text/plain; charset=utf-8', 42, '42'],
    ] as const) {
      const response = await fetch(`${fault.url}/v1/webhooks/echo/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 200, headers: { 'content-type': type }, body }),
      });
      expect(response.status, type).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-security-policy')).toBe('sandbox');
      expect(await response.text()).toBe(text);
      const runId = response.headers.get('x-flowbox-run-id');
      expect(runId).not.toBeNull();
      expect(await waitForFinal(fault, runId ?? '')).toMatchObject({ status: 'SUCCEEDED' });
    }
  });

  it('refuses at publish a response step whose literal status is interim or header unsendable', async () => {
    const withInput = (input: Record<string, unknown>) => ({
      ...ECHO,
      steps: [{ ...ECHO.steps[0], input }],
    });
    for (const [id, input, message] of [
      [
        'literal-101',
        { status: 101, body: {} },
        /definition\.steps\.0\.input\.status: status 101 is not a final/,
      ],
      [
        'literal-crlf',
        { headers: { 'x-a': 'b\r\nc: d' }, body: {} },
        /input\.headers: header "x-a" has a value/,
      ],
    ] as const) {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id, name: id, definition: withInput(input), publish: true },
        fault.stack.apiKey,
      );
      expect(created.status, id).toBe(400);
      const body = (await created.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_FLOW');
      expect(body.error.message).toMatch(message);
    }
  });

  it('observes every reported run in flowbox_run_duration_seconds, by final status', async () => {
    const scrape = async () => {
      const response = await fetch(`${fault.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const count = (text: string, status: string) =>
      promSample(text, `flowbox_run_duration_seconds_count{status="${status}"}`) ?? 0;
    const before = await scrape();
    const ok = await echo(200, {});
    expect(ok.status).toBe(200);
    const failed = await echo(101, {});
    expect(failed.status).toBe(500);
    // The caller's answer comes before the run's final write, which the histogram follows.
    const runs = await Promise.all([ok, failed].map((answer) => waitForFinal(fault, answer.runId ?? '')));
    // The caller's answer comes before the run's final write, which the histogram follows (and
    // an earlier test's run may be observed meanwhile: hence at least, not exactly, one more).
    let after = '';
    await waitUntil(
      async () => {
        after = await scrape();
        return (
          count(after, 'SUCCEEDED') > count(before, 'SUCCEEDED') &&
          count(after, 'FAILED') > count(before, 'FAILED')
        );
      },
      10_000,
      'both runs in flowbox_run_duration_seconds',
    );
    const totalSeconds = runs.reduce((sum, run) => sum + (run.timings?.totalMs ?? Number.NaN), 0) / 1000;
    expect(totalSeconds).toBeGreaterThan(0);
    const sum = (text: string) =>
      ['SUCCEEDED', 'FAILED'].reduce(
        (total, status) =>
          total + (promSample(text, `flowbox_run_duration_seconds_sum{status="${status}"}`) ?? 0),
        0,
      );
    expect(sum(after) - sum(before)).toBeGreaterThanOrEqual(totalSeconds - 0.001);
    expect(after).not.toContain('echo');
  });
});
