import { parseTraceparent, SpanRecordSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { SEEDED_FLOW } from '../../test/support/index.ts';

const h = useExecutorHarness();

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const WORKER_SPAN = 'b7ad6b7169203331';

// In the engine's realm and with the run in its own isolate (RUN_ISOLATION=isolate): the same spans.
describe.each<{ isolation?: 'isolate' }>([{}, { isolation: 'isolate' }])(
  'flow executor, traced runs %o',
  (isolation) => {
    it('records engine.run, a span per step and the log upload after it under the job span, and sends the open span with each callback', async () => {
      const { outcome, spans: recorded } = await h.executor.execute(
        await h.job(SEEDED_FLOW, { ...isolation, traceparent: `00-${TRACE_ID}-${WORKER_SPAN}-01` }),
      );
      expect(outcome.status).toBe('SUCCEEDED');
      const spans = (recorded ?? []).map((span) => SpanRecordSchema.parse(span));
      const byName = new Map(spans.map((span) => [span.name, span]));
      expect(spans.map((span) => span.name).sort()).toEqual(
        ['engine.run', 'log.upload', 'step step_1', 'step step_2', 'step step_3', 'step trigger'].sort(),
      );
      const run = byName.get('engine.run');
      expect(run?.parentSpanId).toBe(WORKER_SPAN);
      expect(run?.attributes).toMatchObject({ 'flowbox.run_id': 'run-1', 'flowbox.flow_id': 'flow-1' });
      for (const span of spans.filter((s) => s !== run)) {
        expect(span.parentSpanId, span.name).toBe(run?.spanId);
        expect(span.startMs).toBeGreaterThanOrEqual(run?.startMs ?? Number.NaN);
        expect(span.status).toBe('ok');
        // The upload follows the outcome: it starts once engine.run ended.
        if (span.name === 'log.upload') expect(span.startMs).toBeGreaterThanOrEqual(run?.endMs ?? Number.NaN);
        else expect(span.endMs).toBeLessThanOrEqual(run?.endMs ?? Number.NaN);
      }
      expect(byName.get('step step_2')?.attributes).toMatchObject({ 'flowbox.step.kind': 'code' });
      expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);

      // The response goes out from inside the response step.
      const sentFrom = (suffix: string) => parseTraceparent(String(h.posts(suffix)[0]?.headers.traceparent));
      expect(sentFrom('response')).toEqual({
        traceId: TRACE_ID,
        spanId: byName.get('step step_3')?.spanId,
        sampled: true,
      });
    });

    it('marks a failing step and the run as errors, with the code', async () => {
      const flow = structuredClone(SEEDED_FLOW);
      const codeStep = flow.steps[1];
      if (codeStep?.type !== 'code') throw new Error('the seeded flow changed');
      codeStep.code = "throw new Error('nope');";
      const { outcome, spans } = await h.executor.execute(
        await h.job(flow, { ...isolation, traceparent: `00-${TRACE_ID}-${WORKER_SPAN}-01` }),
      );
      expect(outcome.status).toBe('FAILED');
      const byName = new Map((spans ?? []).map((span) => [span.name, span]));
      expect(byName.get('step step_2')).toMatchObject({
        status: 'error',
        statusMessage: expect.stringContaining('nope'),
        attributes: expect.objectContaining({ 'flowbox.error.code': outcome.error?.code }),
      });
      expect(byName.get('engine.run')?.status).toBe('error');
      expect(byName.has('step step_3')).toBe(false);
    });

    it('records nothing and sends no traceparent for an untraced run, or one whose caller said not sampled', async () => {
      for (const traceparent of [undefined, `00-${TRACE_ID}-${WORKER_SPAN}-00`]) {
        const job = await h.job(SEEDED_FLOW, traceparent === undefined ? {} : { traceparent });
        const execution = await h.executor.execute(job);
        expect(execution.outcome.status).toBe('SUCCEEDED');
        expect(execution).not.toHaveProperty('spans');
      }
      expect(h.app.requests.filter((r) => r.headers.traceparent !== undefined)).toEqual([]);
    });
  },
);
