import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@flowbox/local-services';
import { type ExecutionMode, parseTraceparent } from '@flowbox/protocol';
import { startTracing, type Tracer } from '@flowbox/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/test-helpers.ts';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
/** The app's dispatch span, as a dispatched job names it. */
const DISPATCH_SPAN = 'b7ad6b7169203331';

/**
 * A traced job through a real worker, engine and OTLP exporter: in SANDBOXED the engine has no
 * network, so its spans reach the collector only through its worker, and its callbacks' header
 * only through the relay.
 */
describe.each<ExecutionMode>(['SANDBOX_CODE_ONLY', 'SANDBOXED'])(
  'a traced job, EXECUTION_MODE=%s',
  (mode) => {
    let receiver: OtlpReceiver;
    let tracer: Tracer;
    let harness: WorkerHarness;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      tracer = await startTracing({
        endpoint: receiver.url,
        serviceName: 'flowbox-worker',
        logger: silentLogger(),
      });
      harness = await startWorkerHarness({
        sandbox: { reuse: false, prewarm: false },
        executionMode: mode,
        tracer,
      });
    });

    afterAll(async () => {
      await harness?.close();
      await tracer?.close();
      await receiver?.close();
    });

    it("exports the worker's and the engine's spans as one tree under the dispatch span, and the callbacks carry it", async () => {
      const job = { ...(await harness.job('run-traced')), traceparent: `00-${TRACE_ID}-${DISPATCH_SPAN}-01` };
      const result = await harness.runner.run(job);
      expect(result.outcome.status).toBe('SUCCEEDED');
      const jobContext = parseTraceparent(result.traceparent ?? '');
      expect(jobContext).toMatchObject({ traceId: TRACE_ID, sampled: true });

      // The log upload's span comes once the upload that follows the result ended.
      await harness.runner.logsSettled();
      // Exported on close at the latest (a flush); waited for on arrival either way.
      void tracer.close();
      const spans = await receiver.waitFor(
        (received) =>
          received.some((s) => s.name === 'log.upload') && received.some((s) => s.name === 'job')
            ? received
            : undefined,
        20_000,
        "the job's spans",
      );
      const byName = new Map(spans.map((s) => [s.name, s]));
      const parentOf = (name: string) => {
        const parent = byName.get(name)?.parentSpanId;
        return parent === DISPATCH_SPAN ? '(dispatch)' : spans.find((s) => s.spanId === parent)?.name;
      };
      const tree = (s: ReceivedSpan) => [s.name, s.service, parentOf(s.name)];
      expect(spans.map(tree).sort()).toEqual(
        [
          ['job', 'flowbox-worker', '(dispatch)'],
          ['provision', 'flowbox-worker', 'job'],
          ['engine.boot', 'flowbox-worker', 'job'],
          ['engine.run', 'flowbox-engine', 'job'],
          ['step trigger', 'flowbox-engine', 'engine.run'],
          ['step step_1', 'flowbox-engine', 'engine.run'],
          ['step step_2', 'flowbox-engine', 'engine.run'],
          ['step step_3', 'flowbox-engine', 'engine.run'],
          ['log.upload', 'flowbox-engine', 'engine.run'],
        ].sort(),
      );
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([TRACE_ID]));
      expect(byName.get('job')?.spanId).toBe(jobContext?.spanId);

      // The callbacks reached the app with the engine span they were sent from.
      const header = (suffix: string) => {
        const request = harness.app.requests.find((r) => r.url === `/v1/engine/runs/run-traced/${suffix}`);
        return parseTraceparent(String(request?.headers.traceparent));
      };
      expect(header('response')).toEqual({
        traceId: TRACE_ID,
        spanId: byName.get('step step_3')?.spanId,
        sampled: true,
      });
    });
  },
);
