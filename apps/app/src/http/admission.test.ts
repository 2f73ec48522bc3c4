import { createLogger } from '@flowbox/node-kit';
import { describe, expect, it } from 'vitest';
import { WebhookAdmission } from './admission.ts';

const logger = createLogger({ name: 'admission-test', level: 'silent' });

/** A queue length the test sets, and readings it can hold back to play a slow Redis. */
function fakeQueue(initial = 0) {
  let length = initial;
  let failing = false;
  let held: Array<() => void> | null = null;
  return {
    set(value: number) {
      length = value;
    },
    fail(value: boolean) {
      failing = value;
    },
    hold() {
      held = [];
    },
    release() {
      for (const go of held ?? []) go();
      held = null;
    },
    count: async () => {
      if (held !== null) await new Promise<void>((resolve) => held?.push(resolve));
      if (failing) throw new Error('redis is down');
      return length;
    },
  };
}

const admission = (queue: ReturnType<typeof fakeQueue>, maxQueuedRuns: number) =>
  new WebhookAdmission({ maxQueuedRuns, countQueued: queue.count, logger });

describe('WebhookAdmission', () => {
  it('admits up to the bound counting what waits and what it admitted, then refuses', async () => {
    const queue = fakeQueue(7);
    const gate = admission(queue, 10);
    await gate.refresh();
    expect([gate.tryAdmit(), gate.tryAdmit(), gate.tryAdmit()]).toEqual([true, true, true]);
    expect(gate.tryAdmit()).toBe(false);
    expect(gate.refusal()).toEqual({
      error: { code: 'QUEUE_FULL', message: expect.stringMatching(/queue is full .*limit 10/) },
    });
  });

  it('frees the place of a webhook that created no run at once', async () => {
    const gate = admission(fakeQueue(9), 10);
    await gate.refresh();
    expect(gate.tryAdmit()).toBe(true);
    expect(gate.tryAdmit()).toBe(false);
    gate.answered(false);
    expect(gate.tryAdmit()).toBe(true);
  });

  it('counts an answered run until a reading that began after the answer', async () => {
    const queue = fakeQueue(0);
    const gate = admission(queue, 2);
    await gate.refresh();
    expect(gate.tryAdmit()).toBe(true);
    expect(gate.tryAdmit()).toBe(true);
    // A reading begins, then both runs are answered; the reading may have missed them.
    queue.hold();
    const reading = gate.refresh();
    gate.answered(true);
    gate.answered(true);
    queue.release();
    await reading;
    expect(gate.estimate).toBe(2);
    expect(gate.tryAdmit()).toBe(false);
    // The next reading began after the answers, so it shows the runs (here: a worker took one).
    queue.set(1);
    await gate.refresh();
    expect(gate.estimate).toBe(1);
    expect(gate.tryAdmit()).toBe(true);
  });

  it('keeps a sync webhook counted while it waits, whatever the readings say', async () => {
    const queue = fakeQueue(0);
    const gate = admission(queue, 1);
    await gate.refresh();
    expect(gate.tryAdmit()).toBe(true);
    queue.set(0); // a worker already took the run; its caller still waits
    await gate.refresh();
    expect(gate.tryAdmit()).toBe(false);
    gate.answered(true);
    await gate.refresh();
    expect(gate.tryAdmit()).toBe(true);
  });

  it('keeps the last reading when Redis cannot be read', async () => {
    const queue = fakeQueue(5);
    const gate = admission(queue, 6);
    await gate.refresh();
    queue.fail(true);
    queue.set(0);
    await gate.refresh();
    expect(gate.estimate).toBe(5);
    expect(gate.tryAdmit()).toBe(true);
    expect(gate.tryAdmit()).toBe(false);
  });

  it('with a bound of 0 admits everything and never reads the queue', async () => {
    const queue = fakeQueue(1_000_000);
    queue.fail(true);
    const gate = admission(queue, 0);
    await gate.start();
    for (let i = 0; i < 100; i++) expect(gate.tryAdmit()).toBe(true);
    gate.close();
  });
});
