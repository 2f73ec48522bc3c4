import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@flowbox/local-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultStack, postWebhook, startFaultStack } from './faults/fault-harness.ts';

/** Every span one sync run of the benchmark flow has, by the service that exports it. */
const EXPECTED: Record<string, string> = {
  webhook: 'flowbox-app',
  enqueue: 'flowbox-app',
  dispatch: 'flowbox-app',
  job: 'flowbox-worker',
  provision: 'flowbox-worker',
  // The worker runs cold without prewarm here, so every job waits for its engine's boot.
  'engine.boot': 'flowbox-worker',
  'engine.run': 'flowbox-engine',
  'step trigger': 'flowbox-engine',
  'step step_1': 'flowbox-engine',
  'step step_2': 'flowbox-engine',
  'step step_3': 'flowbox-engine',
  'log.upload': 'flowbox-engine',
  'callback response': 'flowbox-app',
  'run.finish': 'flowbox-app',
};
/** Only when a step outlasts the progress interval (a slow machine). */
const OPTIONAL = new Set(['callback steps']);

/** The spans of the trace whose `webhook` span is this run's, once all expected ones arrived. */
function runTrace(runId: string) {
  return (spans: readonly ReceivedSpan[]): ReceivedSpan[] | undefined => {
    const root = spans.find((s) => s.name === 'webhook' && s.attributes['flowbox.run_id'] === runId);
    if (root === undefined) return undefined;
    const trace = spans.filter((s) => s.traceId === root.traceId);
    const names = new Set(trace.map((s) => s.name));
    return Object.keys(EXPECTED).every((name) => names.has(name)) ? trace : undefined;
  };
}

describe('tracing: one run, one trace across app, worker and engine (OTLP/HTTP to a local receiver)', () => {
  let receiver: OtlpReceiver;
  let fault: FaultStack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    fault = await startFaultStack({
      appEnv: otlp,
      workerEnv: { ...otlp, REUSE_SANDBOX: 'false', PREWARM: 'false' },
    });
  });

  afterAll(async () => {
    await fault?.close();
    await receiver?.close();
  });

  it('exports one tree from the webhook to the final write, with the engine’s spans under the worker’s job', async () => {
    const answer = await postWebhook(fault.url, 'benchmark');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: 6 });
    const runId = answer.runId ?? '';

    // The app and the worker export in batches (every 5 s): wait for every expected span.
    const trace = await receiver.waitFor(runTrace(runId), 20_000, `the spans of run ${runId}`);

    const names = trace.map((s) => s.name);
    expect(names.filter((name) => !(name in EXPECTED) && !OPTIONAL.has(name))).toEqual([]);
    for (const name of Object.keys(EXPECTED))
      expect(
        names.filter((n) => n === name),
        name,
      ).toHaveLength(1);

    // One tree: exactly one root, and every parent is in the trace.
    const ids = new Set(trace.map((s) => s.spanId));
    expect(ids.size).toBe(trace.length);
    const roots = trace.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => s.name)).toEqual(['webhook']);
    expect(trace.filter((s) => s.parentSpanId !== undefined && !ids.has(s.parentSpanId))).toEqual([]);

    const span = (name: string): ReceivedSpan => {
      const found = trace.find((s) => s.name === name);
      if (found === undefined) throw new Error(`no ${name} span`);
      return found;
    };
    const parentOf = (name: string) => trace.find((s) => s.spanId === span(name).parentSpanId)?.name;
    expect(
      Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, [span(name).service, parentOf(name)]])),
    ).toEqual({
      webhook: ['flowbox-app', undefined],
      enqueue: ['flowbox-app', 'webhook'],
      dispatch: ['flowbox-app', 'webhook'],
      job: ['flowbox-worker', 'dispatch'],
      provision: ['flowbox-worker', 'job'],
      'engine.boot': ['flowbox-worker', 'job'],
      'engine.run': ['flowbox-engine', 'job'],
      'step trigger': ['flowbox-engine', 'engine.run'],
      'step step_1': ['flowbox-engine', 'engine.run'],
      'step step_2': ['flowbox-engine', 'engine.run'],
      'step step_3': ['flowbox-engine', 'engine.run'],
      'log.upload': ['flowbox-engine', 'engine.run'],
      // The response goes out from inside the response step.
      'callback response': ['flowbox-app', 'step step_3'],
      'run.finish': ['flowbox-app', 'job'],
    });

    expect(span('webhook').attributes).toMatchObject({
      'flowbox.run_id': runId,
      'flowbox.flow_id': 'benchmark',
      'http.route': '/v1/webhooks/:flowId/sync',
      'http.response.status_code': 200,
    });
    expect(span('run.finish').attributes).toMatchObject({
      'flowbox.run_id': runId,
      'flowbox.run.status': 'SUCCEEDED',
      'flowbox.run.conclusion': 'finished',
    });
    expect(span('step step_2').attributes).toMatchObject({ 'flowbox.step.kind': 'code' });
    expect(trace.filter((s) => s.statusCode === 2).map((s) => s.name)).toEqual([]);
    // The engine's clock and the worker's are the same machine's: its run sits inside the job.
    expect(span('engine.run').startNs).toBeGreaterThanOrEqual(span('job').startNs);
    expect(span('engine.run').endNs).toBeLessThanOrEqual(span('job').endNs);
  });

  it("joins a caller's trace when the webhook request carries a traceparent", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const response = await fetch(`${fault.url}/v1/webhooks/benchmark/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${callerTrace}-${callerSpan}-01` },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const runId = response.headers.get('x-flowbox-run-id') ?? '';
    const trace = await receiver.waitFor(runTrace(runId), 20_000, `the spans of run ${runId}`);
    expect(new Set(trace.map((s) => s.traceId))).toEqual(new Set([callerTrace]));
    expect(trace.filter((s) => s.parentSpanId === callerSpan).map((s) => s.name)).toEqual(['webhook']);
  });
});
