import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, TraceparentSchema } from './trace.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads the W3C example and writes it back unchanged', () => {
    const text = `00-${TRACE_ID}-${SPAN_ID}-01`;
    const context = parseTraceparent(text);
    expect(context).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, sampled: true });
    expect(formatTraceparent(context ?? { traceId: '', spanId: '', sampled: false })).toBe(text);
  });

  it('reads the sampled flag from bit 0 only', () => {
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)?.sampled).toBe(false);
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-03`)?.sampled).toBe(true);
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-02`)?.sampled).toBe(false);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, sampled: false })).toBe(
      `00-${TRACE_ID}-${SPAN_ID}-00`,
    );
  });

  it('accepts a later version with more fields, and refuses them on version 00', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01-future`)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01-future`)).toBeNull();
  });

  it.each([
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['no flags', `00-${TRACE_ID}-${SPAN_ID}`],
    ['anything else', 'hello'],
  ])('refuses %s', (_what, text) => {
    expect(parseTraceparent(text)).toBeNull();
    expect(TraceparentSchema.safeParse(text).success).toBe(false);
  });

  it('lets the schema pass what the parser reads', () => {
    expect(TraceparentSchema.safeParse(`00-${TRACE_ID}-${SPAN_ID}-01`).success).toBe(true);
  });
});
