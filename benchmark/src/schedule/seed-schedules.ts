import type { FlowDefinition } from '@flowbox/protocol';

/** The flow every schedule of the measurement runs: the tick's trigger, one small code step. */
export function scheduledFlow(everyS: number): FlowDefinition {
  return {
    trigger: { name: 'trigger', piece: 'schedule', trigger: 'every', input: { seconds: everyS } },
    steps: [{ type: 'code', name: 'tick', code: 'return { ok: true };', input: {} }],
  };
}

/**
 * Creates and publishes `count` schedule flows through the API (`POST /v1/flows` with publish),
 * `concurrency` at a time, ids `schedule-00001`…; throws on the first refusal.
 */
export async function seedScheduleFlows(options: {
  appUrl: string;
  apiKey: string;
  count: number;
  everyS: number;
  concurrency: number;
  signal: AbortSignal;
  onProgress: (done: number) => void;
}): Promise<void> {
  const definition = scheduledFlow(options.everyS);
  const width = String(options.count).length;
  let next = 0;
  let done = 0;
  const one = async (index: number) => {
    const id = `schedule-${String(index + 1).padStart(width, '0')}`;
    const response = await fetch(`${options.appUrl}/v1/flows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: `Schedule ${index + 1}`, definition, publish: true }),
      signal: options.signal,
    });
    if (response.status !== 201) {
      throw new Error(`POST /v1/flows (${id}) answered ${response.status}: ${await response.text()}`);
    }
    await response.body?.cancel();
    options.onProgress(++done);
  };
  const lane = async () => {
    while (next < options.count) {
      options.signal.throwIfAborted();
      await one(next++);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, options.count) }, lane));
}
