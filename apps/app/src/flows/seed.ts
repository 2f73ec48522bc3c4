import { BENCHMARK_FLOW, BENCHMARK_FLOW_ID } from '@flowbox/protocol';
import type { FlowPublisher } from './flow-publisher.ts';
import type { FlowsRepository } from './flows-repository.ts';

export { BENCHMARK_FLOW, BENCHMARK_FLOW_ID } from '@flowbox/protocol';

/** The seeded version's id: `<flowId>-v1`, as the flows repository numbers versions. */
export const BENCHMARK_FLOW_VERSION_ID = `${BENCHMARK_FLOW_ID}-v1`;

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
