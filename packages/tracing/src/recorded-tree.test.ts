import type { SpanRecord } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { hrTime } from './otel-tracer.ts';
import { recordedTree } from './recorded-tree.ts';

const WORKER_SPAN = 'aaaaaaaaaaaaaaaa';

const record = (spanId: string, parentSpanId: string, startMs = 1, endMs = 2): SpanRecord => ({
  name: spanId,
  spanId,
  parentSpanId,
  startMs,
  endMs,
  attributes: {},
  status: 'ok',
});

describe('recordedTree', () => {
  it('keeps the records under the given span, parents first', () => {
    const records = [record('0000000000000002', '0000000000000001'), record('0000000000000001', WORKER_SPAN)];
    expect(recordedTree(WORKER_SPAN, records).map((r) => r.spanId)).toEqual([
      '0000000000000001',
      '0000000000000002',
    ]);
  });

  it('drops what hangs elsewhere, repeats an id, ends before it starts or claims to be the parent', () => {
    const records = [
      record('0000000000000001', WORKER_SPAN),
      record('0000000000000002', 'ffffffffffffffff'),
      record('0000000000000003', WORKER_SPAN),
      record('0000000000000003', WORKER_SPAN),
      record('0000000000000004', WORKER_SPAN, 5, 4),
      record('0000000000000005', '0000000000000004'),
      record(WORKER_SPAN, '0000000000000001'),
      // A cycle that never reaches the worker's span.
      record('0000000000000006', '0000000000000007'),
      record('0000000000000007', '0000000000000006'),
    ];
    expect(recordedTree(WORKER_SPAN, records).map((r) => r.spanId)).toEqual(['0000000000000001']);
  });
});

describe('hrTime', () => {
  it('turns epoch milliseconds with a fraction into [seconds, nanoseconds]', () => {
    expect(hrTime(1_700_000_000_123.5)).toEqual([1_700_000_000, 123_500_000]);
    expect(hrTime(0.25)).toEqual([0, 250_000]);
    expect(hrTime(1999.9999999999)).toEqual([2, 0]);
  });
});
