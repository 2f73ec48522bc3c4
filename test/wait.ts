import { setTimeout as delay } from 'node:timers/promises';

/** Waits for a condition, checking every 50 ms; throws with `what` past the deadline. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  deadlineMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await delay(50);
  }
}
