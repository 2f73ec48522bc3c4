import type { FlowDefinition } from '@flowbox/protocol';
import type { FlowsRepository } from './db/flows-repository.ts';
import type { FlowPublisher } from './flows/flow-publisher.ts';

/** The benchmark flow's ids are stable so the printed `curl` works on every machine. */
export const BENCHMARK_FLOW_ID = 'benchmark';
export const BENCHMARK_FLOW_VERSION_ID = 'benchmark-v1';

/** webhook trigger → math helper (2 + 3) → code step (+1) → webhook response: `{"result":6}`. */
export const BENCHMARK_FLOW: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'piece', name: 'step_1', piece: 'math-helper', action: 'addition_math', input: { a: 2, b: 3 } },
    {
      type: 'code',
      name: 'step_2',
      code: 'return { result: Number(inputs.sum) + 1 };',
      input: { sum: '{{step_1.result}}' },
    },
    {
      type: 'piece',
      name: 'step_3',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{step_2}}' },
    },
  ],
};

/**
 * Creates and publishes the benchmark flow on first start. A version left without a bundle
 * (created before bundles existed, or by a start that died mid-way) is published now.
 * Returns true when it changed anything.
 */
export async function seedBenchmarkFlow(flows: FlowsRepository, publisher: FlowPublisher): Promise<boolean> {
  const created = await flows.createFlow({
    id: BENCHMARK_FLOW_ID,
    name: 'Benchmark: sync webhook, math helper, code step, response',
    definition: BENCHMARK_FLOW,
  });
  const version = created ?? (await flows.getVersion(BENCHMARK_FLOW_VERSION_ID));
  if (version === null || version.bundle !== null) return created !== null;
  await publisher.publish(version);
  return true;
}
