import type { ReceivedSpan } from '@flowbox/local-services';
import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from './args.ts';
import { hopTable, traceMarks } from './hops.ts';

/** One sync run's spans, times in ms from `t0`, as the app, worker and engine export them. */
function runTrace(traceId: string, t0: number, callbackEnd = 10): ReceivedSpan[] {
  const span = (name: string, start: number, end: number, parent?: string): ReceivedSpan => ({
    service: 'flowbox-app',
    traceId,
    spanId: `${traceId}-${name}`,
    ...(parent === undefined ? {} : { parentSpanId: `${traceId}-${parent}` }),
    name,
    attributes: {},
    startNs: BigInt(Math.round((t0 + start) * 1e6)),
    endNs: BigInt(Math.round((t0 + end) * 1e6)),
    statusCode: 0,
  });
  return [
    span('webhook', 0, callbackEnd + 0.5),
    span('enqueue', 1, 2, 'webhook'),
    span('dispatch', 3, 4, 'webhook'),
    span('job', 4.5, 20, 'dispatch'),
    span('provision', 4.5, 4.75, 'job'),
    span('engine.run', 5, 18, 'job'),
    span('step step_3', 7, 10, 'engine.run'),
    span('callback response', 8, callbackEnd, 'step step_3'),
    span('log.upload', 12, 17, 'engine.run'),
    span('run.finish', 21, 22, 'job'),
  ];
}

describe('the hop table', () => {
  it('measures each hop of a trace between the span boundaries that bound it', () => {
    const table = hopTable([...runTrace('a', 1000), ...runTrace('b', 2000, 12)]);
    expect(table.traces).toBe(2);
    const byName = Object.fromEntries(table.caller.map((r) => [r.hop, r]));
    expect(byName['accepted → enqueue begins (flow lookup, run row INSERT)']?.p50Ms).toBeCloseTo(1);
    expect(byName['handed → the worker has the job (socket.io)']?.p50Ms).toBeCloseTo(0.5);
    expect(byName['worker: provision (the cache checks)']?.p50Ms).toBeCloseTo(0.25);
    expect(byName['provisioned → engine starts the flow (acquire, IPC)']?.p50Ms).toBeCloseTo(0.25);
    expect(byName['response callback in the app (Redis keep, the caller’s app told)']?.meanMs).toBeCloseTo(3);
    expect(table.answered.meanMs).toBeCloseTo(11.5);
    const after = Object.fromEntries(table.afterAnswer.map((r) => [r.hop, r]));
    expect(after['log upload (engine → S3)']?.p50Ms).toBeCloseTo(5);
    expect(after['result ready → final write begins (socket.io)']?.p50Ms).toBeCloseTo(1);
  });

  it('leaves out traces before the window, and traces that are not one whole sync run', () => {
    const retried = [...runTrace('c', 3000), ...runTrace('c', 3000).filter((s) => s.name === 'dispatch')];
    const noAnswer = runTrace('d', 4000).filter((s) => s.name !== 'callback response');
    expect(traceMarks(retried)).toBeNull();
    expect(traceMarks(noAnswer)).toBeNull();
    expect(
      hopTable([...runTrace('a', 1000), ...runTrace('b', 2000), ...retried, ...noAnswer], 1500).traces,
    ).toBe(1);
  });

  it('is asked for with --hops, which has no meaning against --target', () => {
    const paths = { cwd: '/repo', defaultOutDir: '/repo/out' };
    expect(parseBenchArgs(['--hops'], {}, paths).hops).toBe(true);
    expect(parseBenchArgs([], {}, paths).hops).toBe(false);
    expect(() => parseBenchArgs(['--hops', '--target', 'http://127.0.0.1:3000'], {}, paths)).toThrow(
      /--hops/,
    );
  });
});
