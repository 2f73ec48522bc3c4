import { type OtlpReceiver, startOtlpReceiver } from '@flowbox/local-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracer } from '../src/index.ts';

const now = () => performance.timeOrigin + performance.now();

describe('span times', () => {
  let receiver: OtlpReceiver;
  let tracer: Tracer;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracer = await startTracing({ endpoint: receiver.url, serviceName: 'probe', logger: { warn() {} } });
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('keeps the fraction of a millisecond at both ends, so the spans of one request line up', async () => {
    const marks: Array<{ name: string; before: number; after: number; ended: [number, number] }> = [];
    for (const name of ['first', 'second', 'third']) {
      const before = now();
      const span = tracer.startSpan(name);
      const after = now();
      const endBefore = now();
      span.end();
      marks.push({ name, before, after, ended: [endBefore, now()] });
    }
    await tracer.close();
    const spans = await receiver.waitFor(
      (received) => (received.length >= 3 ? received : undefined),
      10_000,
      'three spans',
    );
    for (const mark of marks) {
      const span = spans.find((s) => s.name === mark.name);
      const startMs = Number(span?.startNs) / 1e6;
      const endMs = Number(span?.endNs) / 1e6;
      // Whole milliseconds (the SDK's own clock) would fall before `before` almost every time.
      expect({
        name: mark.name,
        start: startMs >= mark.before - 0.001 && startMs <= mark.after + 0.001,
      }).toEqual({
        name: mark.name,
        start: true,
      });
      expect({
        name: mark.name,
        end: endMs >= mark.ended[0] - 0.001 && endMs <= mark.ended[1] + 0.001,
      }).toEqual({
        name: mark.name,
        end: true,
      });
    }
  });
});
