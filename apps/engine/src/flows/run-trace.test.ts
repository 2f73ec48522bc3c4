import { MAX_ENGINE_SPANS, SpanRecordSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { startRunTrace } from './run-trace.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT = `00-${TRACE_ID}-b7ad6b7169203331-01`;

/** A clock that ticks 1 ms per read and span ids 0000000000000001, 2, ... */
function fakes() {
  let now = 1_000;
  let id = 0;
  return {
    clock: () => now++,
    ids: () => (++id).toString(16).padStart(16, '0'),
  };
}

describe('startRunTrace', () => {
  it('opens children under engine.run, and a callback carries the latest one still open', () => {
    const { clock, ids } = fakes();
    const trace = startRunTrace(PARENT, { 'flowbox.run_id': 'r' }, clock, ids);
    if (trace === null) throw new Error('expected a trace');
    expect(trace.traceparent()).toBe(`00-${TRACE_ID}-0000000000000001-01`);
    const first = trace.start('step a');
    expect(trace.traceparent()).toBe(`00-${TRACE_ID}-0000000000000002-01`);
    first.end();
    expect(trace.traceparent()).toBe(`00-${TRACE_ID}-0000000000000001-01`);
    // Children open at once (a loop's iterations): the latest open one is the callbacks' parent;
    // finish closes what is left open.
    const b = trace.start('step b');
    trace.start('step c');
    expect(trace.traceparent()).toBe(`00-${TRACE_ID}-0000000000000004-01`);
    b.end();
    expect(trace.traceparent()).toBe(`00-${TRACE_ID}-0000000000000004-01`);
    const records = trace.finish({ code: 'STEP_FAILED', message: 'c failed' });
    expect(records.map((r) => [r.name, r.spanId, r.parentSpanId, r.status])).toEqual([
      ['step a', '0000000000000002', '0000000000000001', 'ok'],
      ['step b', '0000000000000003', '0000000000000001', 'ok'],
      ['step c', '0000000000000004', '0000000000000001', 'ok'],
      ['engine.run', '0000000000000001', 'b7ad6b7169203331', 'error'],
    ]);
    const run = records.at(-1);
    expect(run).toMatchObject({
      startMs: 1_000,
      statusMessage: 'c failed',
      attributes: { 'flowbox.run_id': 'r', 'flowbox.error.code': 'STEP_FAILED' },
    });
    expect(run?.endMs).toBeGreaterThan(records[2]?.endMs ?? Number.POSITIVE_INFINITY);
  });

  it('keeps engine.run when a run has more steps than the cap', () => {
    const { clock, ids } = fakes();
    const trace = startRunTrace(PARENT, {}, clock, ids);
    for (let i = 0; i < MAX_ENGINE_SPANS + 10; i++) trace?.start(`step ${i}`).end();
    const records = trace?.finish() ?? [];
    expect(records).toHaveLength(MAX_ENGINE_SPANS);
    expect(records.at(-1)?.name).toBe('engine.run');
  });

  it('cuts what comes from the flow to what the worker accepts, so the result still parses', () => {
    const trace = startRunTrace(PARENT, {});
    trace
      ?.start(`step ${'s'.repeat(300)}`)
      .end(
        { code: 'STEP_FAILED', message: 'm'.repeat(5_000) },
        { 'flowbox.step.kind': `piece/${'a'.repeat(5_000)}` },
      );
    const records = trace?.finish() ?? [];
    expect(records).toHaveLength(2);
    for (const record of records) expect(SpanRecordSchema.safeParse(record).success).toBe(true);
  });

  it('records nothing for a traceparent that is invalid or not sampled', () => {
    expect(startRunTrace('nonsense', {})).toBeNull();
    expect(startRunTrace(`00-${TRACE_ID}-b7ad6b7169203331-00`, {})).toBeNull();
  });
});
